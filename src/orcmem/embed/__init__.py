"""Embeddings: the pinned all-MiniLM-L6-v2 model files and the embedders that run them.

Importing this package is cheap: fastembed, numpy and ONNX Runtime are imported only when a model loads, and
urllib/tarfile only when a model is downloaded or unpacked.
"""
