"""Issue 37 item 5: the README's training example gives the same model whatever torch's thread count."""

import torch

from iortemp._toy import trained_toy_classifier


def _trained_logits(threads: int) -> torch.Tensor:
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        clf, (_, _, test) = trained_toy_classifier(n_train=96, epochs=1, seed=0)
        assert torch.get_num_threads() == threads  # the caller's setting comes back
        return torch.as_tensor(clf(test[0][:16]))
    finally:
        torch.set_num_threads(before)


def test_toy_training_is_the_same_on_one_and_two_threads():
    assert torch.equal(_trained_logits(1), _trained_logits(2))
