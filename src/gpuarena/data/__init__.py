"""Shipped data: the GPU catalog, published results and the claims of the articles."""
