"""CPU per job of ScriptedPipeline.execute in two checkouts, on the same captured batches (a
one-off tool of session 10): PYTHONPATH=<new checkout> python ab_scripted.py <old checkout> <new checkout>

A start and a finish batch of 128 jobs are captured from start_finish_cost.py (same folder),
then each checkout's ScriptedPipeline sends them to a private redis-server 30 times; the best
(least) CPU time of this process per job is printed, old, new, old, new."""
import importlib.util, os, sys, time
from pathlib import Path
os.environ.setdefault("HF_HUB_OFFLINE", "1")
old_dir, new_dir = sys.argv[1], sys.argv[2]

def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

old = load(f"{old_dir}/common/scripted.py", "old_scripted")
new = load(f"{new_dir}/common/scripted.py", "new_scripted")
import common.scripted as live
stacks = []
live_execute = live.ScriptedPipeline.execute
def grab(self, raise_on_error=True):
    stacks.append(list(self.command_stack))
    return live_execute(self, raise_on_error)
live.ScriptedPipeline.execute = grab
sys.argv = ["start_finish_cost.py", "128"]
exec((Path(__file__).parent / "start_finish_cost.py").read_text())
start_stack, finish_stack = stacks[-2], stacks[-1]
from redis import Redis
with RedisServer(appendonly=False) as server:
    r = Redis.from_url(server.url)
    for label, stack in (("start", start_stack), ("finish", finish_stack)):
        for module in (old, new, old, new):
            best = 1e9
            for _ in range(30):
                r.flushall()
                pipe = module.ScriptedPipeline(r)
                pipe.command_stack = list(stack)
                c = time.process_time()
                pipe.execute()
                best = min(best, time.process_time() - c)
            print(label, module.__name__, "best us/job", round(best / 128 * 1e6, 1), len(stack), "commands")
