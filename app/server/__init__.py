"""The server: the app factory, what starts with it, health, error handlers, the HTTP
stack and metrics."""
