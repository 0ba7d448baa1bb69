"""Analyses of the tensor-level IR: the shape rules every call of a public function is checked against."""
