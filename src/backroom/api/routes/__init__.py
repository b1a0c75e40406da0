"""The HTTP routes, one module per resource. Each route only translates to `backroom.service`."""
