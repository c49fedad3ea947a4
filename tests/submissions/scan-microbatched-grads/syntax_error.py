# expect: syntax_error
# why: a syntax error is reported as such, with its line
def microbatched_grads(w, b, x_full, y_full, n_microbatches)
    return 0.0
