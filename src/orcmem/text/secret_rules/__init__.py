"""A maintained scanner's rule set, consumed as data (Betterleaks' default rules, MIT), and the module that reads it."""
