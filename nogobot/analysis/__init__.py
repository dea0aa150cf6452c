"""Analysis front ends: the JSON-lines analysis engine (``engine``) and its protocol
(``protocol``), and game reviews built on it (``review``, ``review_graph``)."""
