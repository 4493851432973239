"""The built-in routes of the native server, one module per endpoint, registered as
:class:`~openmind.core.specs.RouteSpec` by :mod:`openmind.nlp.serve.plugin` (the same hook a plugin
uses to add e.g. ``/v1/images/generations``). Each is ``async def handler(request)``."""
