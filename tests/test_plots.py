import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from simul.analysis import plots  # noqa: E402

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


def test_natural_key_orders_numbers_as_numbers():
    labels = ["k = 200 frames", "k = 50 frames", "k = 100 frames", "k = 1000 frames"]
    assert sorted(labels, key=plots.natural_key) == [
        "k = 50 frames", "k = 100 frames", "k = 200 frames", "k = 1000 frames"]
    assert sorted([20, 3.5, 100], key=plots.natural_key) == [3.5, 20, 100]
    assert sorted(["b", "a10", "a9"], key=plots.natural_key) == ["a9", "a10", "b"]


def test_tradeoff_orders_labelled_groups_by_their_numbers():
    # the tutorial's sweep: one line per k, labelled "k = … frames"; a string sort would
    # draw and list k = 100 and 200 before k = 50
    rows = pd.DataFrame({"wait": ["k = 200 frames", "k = 200 frames", "k = 50 frames",
                                  "k = 50 frames", "k = 100 frames", "k = 100 frames"],
                         "s": [10, 20, 10, 20, 10, 20],
                         "AL": [2400.0, 2600.0, 900.0, 1100.0, 1400.0, 1600.0],
                         "BLEU": [30.0, 32.0, 20.0, 22.0, 25.0, 27.0]})
    fig, ax = plt.subplots()
    plots.tradeoff(rows, x="AL", y="BLEU", hue="wait", style_by="wait", order_by="s",
                   annotate="s", ax=ax)
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["k = 50 frames", "k = 100 frames", "k = 200 frames"]
    # the lines, drawn in that order, at their k's AL (x) and BLEU (y)
    lines = [line for line in ax.get_lines() if len(line.get_xdata()) == 2]
    assert [list(line.get_xdata()) for line in lines] == [[900.0, 1100.0], [1400.0, 1600.0],
                                                          [2400.0, 2600.0]]
    # the first colour of the palette goes to the smallest k, in the legend as on the line
    handles = ax.get_legend().legend_handles
    assert [h.get_color() for h in handles] == [line.get_color() for line in lines]
    plt.close(fig)
