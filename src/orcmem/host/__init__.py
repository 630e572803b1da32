"""The host machine: the profile's folder, projects, key store, git, files, sockets, processes, servers."""
