"""The built-in label sources, one module each behind labels.source.LabelSource (registered in
labels/registry.py): `verifier`, `mc`, `reference`, `judge`."""
