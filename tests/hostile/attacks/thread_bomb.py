# attack: resource: processes
# expect: runtime_error|time_limit_exceeded
# effect: none
# why: starts threads until the limit
import threading, time
def solve(x, scale):
    while True:
        threading.Thread(target=time.sleep, args=(600,), daemon=True).start()
