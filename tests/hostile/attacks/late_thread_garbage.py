# attack: writes after the harness
# expect: runtime_error
# effect: none
# why: a background thread writes garbage to the result channel
import os, sys, threading, time
def spam():
    time.sleep(0.05)
    os.write(int(sys.argv[1]), b'JJF1' + b'\xff' * 64)
threading.Thread(target=spam).start()
def solve(x, scale):
    time.sleep(0.3)
    return x * scale
