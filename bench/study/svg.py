"""Grouped bar charts written as SVG by hand (no plotting library needed)."""
import math
from xml.sax.saxutils import escape

COLOURS = ["#d95f02", "#7570b3", "#1b9e77", "#e7298a", "#66a61e", "#e6ab02"]
FONT = 'font-family="sans-serif"'


def _nice_max(v):
    """A round number at or above v, for the top of an axis."""
    if v <= 0:
        return 1.0
    e = 10 ** math.floor(math.log10(v))
    for m in (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10):
        if m * e >= v:
            return m * e
    return 10 * e


def _fmt(v):
    return f"{v:.0f}" if v >= 100 else f"{v:.1f}" if v >= 10 else f"{v:.2f}"


class Panel:
    """One chart: for each group (a label on the x axis) a bar per series.
    values[series][group] is a number, or a string drawn in place of the
    bar (such as "OOM")."""

    def __init__(self, title, unit, groups, series, values):
        self.title, self.unit = title, unit
        self.groups, self.series, self.values = groups, series, values

    def render(self, x0, y0, w, h):
        out = []
        left, bottom, top = 48, 36, 28
        pw, ph = w - left - 10, h - top - bottom
        nums = [v for s in self.series for v in self.values.get(s, {}).values()
                if isinstance(v, (int, float))]
        vmax = _nice_max(max(nums) if nums else 1)
        ox, oy = x0 + left, y0 + top + ph
        out.append(f'<text x="{x0 + w / 2:.1f}" y="{y0 + 16}" text-anchor="middle" '
                   f'font-size="13" font-weight="bold" {FONT}>{escape(self.title)}</text>')
        for i in range(5):
            v = vmax * i / 4
            y = oy - ph * i / 4
            out.append(f'<line x1="{ox}" y1="{y:.1f}" x2="{ox + pw}" y2="{y:.1f}" '
                       f'stroke="#ddd" stroke-width="1"/>')
            out.append(f'<text x="{ox - 4}" y="{y + 4:.1f}" text-anchor="end" '
                       f'font-size="10" {FONT}>{round(v, 6):g}</text>')
        out.append(f'<text x="{x0 + 10}" y="{y0 + top + ph / 2:.1f}" font-size="10" {FONT} '
                   f'text-anchor="middle" transform="rotate(-90 {x0 + 10} {y0 + top + ph / 2:.1f})">'
                   f'{escape(self.unit)}</text>')
        out.append(f'<line x1="{ox}" y1="{oy}" x2="{ox + pw}" y2="{oy}" stroke="#000"/>')
        out.append(f'<line x1="{ox}" y1="{oy}" x2="{ox}" y2="{oy - ph}" stroke="#000"/>')
        gw = pw / max(1, len(self.groups))
        bw = gw * 0.8 / max(1, len(self.series))
        for gi, g in enumerate(self.groups):
            gx = ox + gi * gw + gw * 0.1
            out.append(f'<text x="{ox + gi * gw + gw / 2:.1f}" y="{oy + 14}" text-anchor="middle" '
                       f'font-size="11" {FONT}>{escape(str(g))}</text>')
            for si, s in enumerate(self.series):
                v = self.values.get(s, {}).get(g)
                bx = gx + si * bw
                cx = bx + bw / 2
                if isinstance(v, (int, float)):
                    bh = ph * v / vmax
                    out.append(f'<rect x="{bx:.1f}" y="{oy - bh:.1f}" width="{bw - 2:.1f}" '
                               f'height="{bh:.1f}" fill="{COLOURS[si % len(COLOURS)]}">'
                               f'<title>{escape(s)}, {escape(str(g))}: {_fmt(v)} {escape(self.unit)}'
                               f'</title></rect>')
                    out.append(f'<text x="{cx:.1f}" y="{oy - bh - 3:.1f}" text-anchor="middle" '
                               f'font-size="9" {FONT}>{_fmt(v)}</text>')
                elif v is not None:
                    out.append(f'<rect x="{bx:.1f}" y="{oy - ph:.1f}" width="{bw - 2:.1f}" '
                               f'height="{ph:.1f}" fill="none" stroke="{COLOURS[si % len(COLOURS)]}" '
                               f'stroke-dasharray="4 3"/>')
                    out.append(f'<text x="{cx:.1f}" y="{oy - ph / 2:.1f}" text-anchor="middle" '
                               f'font-size="10" font-weight="bold" fill="#b00" {FONT} '
                               f'transform="rotate(-90 {cx:.1f} {oy - ph / 2:.1f})">{escape(str(v))}</text>')
        out.append(f'<text x="{ox + pw / 2:.1f}" y="{oy + 30}" text-anchor="middle" font-size="10" '
                   f'{FONT}>ranks</text>')
        return out


def figure(path, title, panels, series, note=None, panel_w=330, panel_h=280):
    """Writes panels side by side under title, with a legend of series."""
    w = panel_w * len(panels) + 20
    h = panel_h + 80 + (16 if note else 0)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
           f'viewBox="0 0 {w} {h}">',
           f'<rect width="{w}" height="{h}" fill="#fff"/>',
           f'<text x="{w / 2}" y="22" text-anchor="middle" font-size="15" {FONT}>{escape(title)}</text>']
    for i, p in enumerate(panels):
        out.extend(p.render(10 + i * panel_w, 34, panel_w, panel_h))
    ly = 34 + panel_h + 24
    lx = 20
    for si, s in enumerate(series):
        out.append(f'<rect x="{lx}" y="{ly - 10}" width="12" height="12" '
                   f'fill="{COLOURS[si % len(COLOURS)]}"/>')
        out.append(f'<text x="{lx + 16}" y="{ly}" font-size="12" {FONT}>{escape(s)}</text>')
        lx += 30 + 8 * len(s)
    if note:
        out.append(f'<text x="20" y="{ly + 20}" font-size="10" fill="#444" {FONT}>{escape(note)}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
