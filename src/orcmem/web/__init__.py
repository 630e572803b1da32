"""The Memory page: a local web app to see, search, correct and delete what agents remember.

`orcmem ui` serves it on 127.0.0.1 with `serve`; tests build it with `create_app` and drive it through ASGI.
"""
