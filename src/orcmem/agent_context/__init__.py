"""What an agent is given: the brief at session start and recall before each prompt."""
