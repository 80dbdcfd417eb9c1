"""What a check module declares once, its Contract, and the contracts shared by several.

Contract (contract.py), what the registry and reference say of it
(contract_derivation.py) and its validation when collected (contract_validation.py); the
contracts shared by the model's modules (module_checks.py) and by text that must come
from the witnessed model calls (text_from_calls.py).
"""
