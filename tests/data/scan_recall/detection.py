# A DETR-style set-prediction head and matcher, written for mscompat's scan recall test.
import numpy as np
import torch
import torch.nn.functional as F
from scipy.optimize import linear_sum_assignment
from torch import nn


def box_cxcywh_to_xyxy(x):
    x_c, y_c, w, h = x.unbind(-1)
    b = [(x_c - 0.5 * w), (y_c - 0.5 * h), (x_c + 0.5 * w), (y_c + 0.5 * h)]
    return torch.stack(b, dim=-1)


def generalized_box_iou(boxes1, boxes2):
    area1 = (boxes1[:, 2] - boxes1[:, 0]) * (boxes1[:, 3] - boxes1[:, 1])
    lt = torch.max(boxes1[:, None, :2], boxes2[:, :2])
    wh = (boxes2[:, 2:] - lt).clamp(min=0)
    inter = wh[:, :, 0] * wh[:, :, 1]
    return inter / area1[:, None]


class MLP(nn.Module):
    def __init__(self, input_dim, hidden_dim, output_dim, num_layers):
        super().__init__()
        h = [hidden_dim] * (num_layers - 1)
        self.layers = nn.ModuleList(nn.Linear(n, k) for n, k in zip([input_dim] + h, h + [output_dim]))

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = F.relu(layer(x)) if i < len(self.layers) - 1 else layer(x)
        return x


class HungarianMatcher(nn.Module):
    def __init__(self, cost_class=1.0):
        super().__init__()
        self.cost_class = cost_class

    @torch.no_grad()
    def forward(self, outputs, targets):
        bs, num_queries = outputs["pred_logits"].shape[:2]
        out_prob = outputs["pred_logits"].flatten(0, 1).softmax(-1)
        tgt_ids = torch.cat([v["labels"] for v in targets])
        cost = -out_prob[:, tgt_ids]
        C = cost.view(bs, num_queries, -1).cpu()
        sizes = [len(v["boxes"]) for v in targets]
        indices = [linear_sum_assignment(c[i]) for i, c in enumerate(C.split(sizes, -1))]
        order = np.argsort(np.array(sizes))
        order.sum()
        return [(torch.as_tensor(i, dtype=torch.int64), torch.as_tensor(j, dtype=torch.int64)) for i, j in indices]


def loss_labels(src_logits, target_classes, empty_weight):
    loss_ce = F.cross_entropy(src_logits.transpose(1, 2), target_classes, empty_weight)
    probs = [logit.sigmoid() for logit in src_logits]
    keep = (target_classes != 91).nonzero(as_tuple=True)
    return loss_ce, probs, keep
