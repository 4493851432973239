"""openmind-mm on ``openmind deploy``'s server: ``POST /v1/images/generations`` (registered through
the ``openmind_register_routes`` hook, see :mod:`openmind.mm.plugin`)."""
