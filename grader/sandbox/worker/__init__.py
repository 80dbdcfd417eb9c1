"""What runs inside the worker; it never imports the grader's side (host/).

Its call loop (serve.py, `python -m grader.sandbox.worker.serve`), the models it hands a
submission (worker_models.py, remote_model.py), the harnesses that drive a submission's
module (harnesses.py, named by harness_ref.py), the state put back between submissions
(baseline.py), the reference code it must not hold (held.py), its errors as data, with
the limit each stands for (describe.py), and isolate() (isolation.py) with the layers it
applies (layers/) and what this machine offers of them (machine.py).
"""
