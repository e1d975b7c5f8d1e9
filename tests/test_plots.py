import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from simul import plots  # noqa: E402

ROWS = pd.DataFrame({"model": ["a", "a", "b", "b"], "LAAL": [500.0, 1500.0, 600.0, 1600.0],
                     "BLEU": [10.0, 30.0, 16.0, 28.0], "k": [3, 5, 3, 5]})


def _legend_and_axes_boxes(legend_outside: bool):
    fig, ax = plt.subplots(figsize=(6.0, 4.0))
    plots.tradeoff(ROWS, hue="model", order_by="k", ax=ax, legend_outside=legend_outside)
    fig.canvas.draw()
    boxes = ax.get_legend().get_window_extent(), ax.get_window_extent()
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    plt.close(fig)
    return boxes, texts


def test_tradeoff_legend_inside_by_default_and_right_of_the_axes_on_request():
    (legend, axes), texts = _legend_and_axes_boxes(False)
    assert axes.x0 <= legend.x0 and legend.x1 <= axes.x1
    (legend, axes), moved = _legend_and_axes_boxes(True)
    assert legend.x0 > axes.x1  # wholly right of the plotting area
    assert moved == texts == ["a", "b"]  # the same entries, moved
