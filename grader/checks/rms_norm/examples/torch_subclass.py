from torch import nn


class RMSNorm(nn.RMSNorm):
    def __init__(self, config):
        super().__init__(config.n_embd, eps=1e-5)
