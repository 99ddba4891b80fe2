"""The release datasheet (paper Tables 1, 6, 7; Figures 3, 6): the pure figures, the page, CSV and the command."""
