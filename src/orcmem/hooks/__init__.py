"""The agents' hooks: the prompt hook's fast first step and the handlers behind every hook."""
