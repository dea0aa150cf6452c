"""The engine: the array tree and its kernels (``mcts``), rollouts (``playout``), the endgame
solver (``solver``), the search driver (``search``, ``gumbel``), the clock's plan
(``timecontrol``), opening books (``book``), the agent contract (``agent``) and the network
player that ties them together (``player``)."""
