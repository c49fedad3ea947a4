"""The JSON API's request and response models: a learner's (learners.py) and the
instructor API's (courses.py)."""
