"""Grading, by floor: values/, subject/, judging/, contracts/, engine/.

values/ (values and tolerances), subject/ (the kata seam, references, inputs, cases),
judging/, contracts/, engine/ (submissions in, a Report out; the report's own floor is
grader/reports/, under the engine).
"""
