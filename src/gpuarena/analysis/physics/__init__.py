"""The physics every decision asks: the roofline and its evidence-bound ceilings, the interconnect,
serving and LLM-training models, each as one object (models.py) with its check and expected figure,
and the projections across GPUs.  Reads rows/, never verbs/."""
