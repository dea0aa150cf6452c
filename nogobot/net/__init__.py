"""The network: input planes (``features``), model files and their metadata (``modelfile``), and
evaluators that run an ONNX network with onnxruntime (``inference``). Never imports torch."""
