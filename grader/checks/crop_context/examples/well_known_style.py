from torchtyping import TensorType


class Solution:
    def crop_context(
        self, context: TensorType[1, "T", int], context_length: int
    ) -> TensorType[1, "T_cropped", int]:
        return context[:, -context_length:]
