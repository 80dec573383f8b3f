import torch, torch.nn as nn
torch.manual_seed(0)
m = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.GELU(), nn.Conv2d(16, 16, 3, padding=1), nn.GELU(), nn.MaxPool2d(2), nn.AvgPool2d(2), nn.Flatten(), nn.Linear(16*4*4, 10)).eval()
x = torch.randn(2, 3, 16, 16)
with torch.no_grad():
    y = m(x)
    print("eager", tuple(y.shape))
    from torch.utils import mkldnn as mk
    mm = mk.to_mkldnn(m)
    y2 = mm(x.to_mkldnn()).to_dense()
    print("mkldnn", tuple(y2.shape), float((y-y2).abs().max()) < 1e-3)
