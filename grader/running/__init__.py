"""Starting and supervising children: launchers (plain and bubblewrap), their limits
(cgroups, rlimits, seccomp, time), warm pools, the frames a child sends and the output
it prints, GPU sharing and the warm-up compilation cache."""
