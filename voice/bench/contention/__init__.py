"""``voice bench contention``: do the models fight over the cores?"""
