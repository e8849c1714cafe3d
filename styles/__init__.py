"""The dashboard's Textual stylesheets (data: app.tcss), a package so it installs with them."""
