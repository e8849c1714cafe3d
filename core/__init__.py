"""Pure domain of gobtui: no file, network, process or clock access, no Textual."""
