#!/usr/bin/env python3
"""Reads back what a browser made of the HTML report.

Usage:
  html_screenshot.py png FILE.png [NAME=#rrggbb ...]
  html_screenshot.py dom FILE.html

png: summarises a screenshot: its size, how many distinct colours it has, the
share of pixels that are not the white page background, and for each named
colour the pixels of exactly that colour with their connected areas ("blobs",
4-connected, at least 40 pixels) as bounding boxes, left to right. A hang bar
of the timeline is one blob of its severity colour.

dom: summarises a page as `chromium --dump-dom` serialises it after the page
script ran: the timeline's hang bars (their classes and the link around each),
every element id, each flame-graph section's frames (text, classes, inline
style), its search status and reset button, the tooltip, and how many script,
img, iframe, object and svg elements the page holds.

Prints the summary as JSON on stdout; exits 1 with the reason on stderr when
the file cannot be read.
"""
import json
import sys
from html.parser import HTMLParser

MIN_BLOB_PIXELS = 40
# Elements without an end tag: they never go on the open-element stack.
VOID_ELEMENTS = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


def parse_colour(text):
    text = text.lstrip("#")
    if len(text) != 6:
        raise ValueError("colour must be #rrggbb, got %r" % text)
    return tuple(int(text[i:i + 2], 16) for i in (0, 2, 4))


def blobs(points):
    """4-connected areas of a set of (x, y) points, as bounding boxes with pixel counts."""
    remaining = set(points)
    found = []
    while remaining:
        start = remaining.pop()
        pending = [start]
        xs, ys, count = [start[0]], [start[1]], 1
        while pending:
            x, y = pending.pop()
            for neighbour in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
                if neighbour in remaining:
                    remaining.remove(neighbour)
                    pending.append(neighbour)
                    xs.append(neighbour[0])
                    ys.append(neighbour[1])
                    count += 1
        if count >= MIN_BLOB_PIXELS:
            found.append({"x": min(xs), "y": min(ys), "width": max(xs) - min(xs) + 1,
                          "height": max(ys) - min(ys) + 1, "pixels": count})
    return sorted(found, key=lambda blob: (blob["x"], blob["y"]))


def summarise_png(path, named):
    from PIL import Image  # pillow; imported here so `dom` works without it
    image = Image.open(path).convert("RGB")
    width, height = image.size
    pixels = image.load()
    wanted = {parse_colour(hex_colour): name for name, hex_colour in named}
    points = {name: [] for name, _ in named}
    counts = {}
    ink = 0
    for y in range(height):
        for x in range(width):
            colour = pixels[x, y]
            counts[colour] = counts.get(colour, 0) + 1
            if colour != (255, 255, 255):
                ink += 1
            name = wanted.get(colour)
            if name is not None:
                points[name].append((x, y))
    return {
        "width": width,
        "height": height,
        "distinctColours": len(counts),
        "inkFraction": ink / float(width * height),
        "colours": {name: {"pixels": len(found), "blobs": blobs(found)} for name, found in points.items()},
    }


class DOMSummary(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack = []  # (tag, attrs, record) of open elements
        self.ids = []
        self.counts = {"script": 0, "img": 0, "iframe": 0, "object": 0, "svg": 0}
        self.hang_bars = []
        self.flames = {}
        self.tooltip = None
        self.h1 = ""

    def enclosing(self, predicate):
        for tag, attrs, record in reversed(self.stack):
            if predicate(tag, attrs):
                return attrs, record
        return None, None

    def handle_starttag(self, tag, attr_list):
        attrs = dict(attr_list)
        classes = (attrs.get("class") or "").split()
        if tag in self.counts:
            self.counts[tag] += 1
        if attrs.get("id"):
            self.ids.append(attrs["id"])
        record = None
        if tag == "rect" and "hang-bar" in classes:
            link, _ = self.enclosing(lambda t, a: t == "a")
            self.hang_bars.append({"hangId": attrs.get("data-hang-id"), "classes": classes,
                                   "href": (link or {}).get("href")})
        section, _ = self.enclosing(lambda t, a: "flame-section" in (a.get("class") or "").split())
        if "flame-section" in classes:
            self.flames[attrs.get("id")] = {"frames": [], "status": "", "resetDisabled": None, "searchValue": None}
        elif section is not None:
            flame = self.flames[section.get("id")]
            if tag == "div" and "frame" in classes:
                record = {"text": "", "classes": classes, "style": attrs.get("style") or ""}
                flame["frames"].append(record)
            elif "flame-status" in classes:
                record = {"text": ""}
                flame["statusRecord"] = record
            elif tag == "button" and "flame-reset" in classes:
                flame["resetDisabled"] = "disabled" in attrs
        if attrs.get("id") == "tooltip":
            record = {"text": "", "style": attrs.get("style") or ""}
            self.tooltip = record
        if tag == "h1":
            record = {"text": ""}
            self.h1_record = record
        if tag not in VOID_ELEMENTS:
            self.stack.append((tag, attrs, record))

    def handle_startendtag(self, tag, attr_list):
        self.handle_starttag(tag, attr_list)
        if tag not in VOID_ELEMENTS and self.stack and self.stack[-1][0] == tag:
            self.stack.pop()

    def handle_endtag(self, tag):
        for index in range(len(self.stack) - 1, -1, -1):
            if self.stack[index][0] == tag:
                del self.stack[index:]
                return

    def handle_data(self, data):
        # Text belongs to every open element that records text (a frame inside a section, say).
        for _, _, record in self.stack:
            if record is not None and "text" in record:
                record["text"] += data

    def result(self):
        for flame in self.flames.values():
            flame["status"] = flame.pop("statusRecord", {"text": ""})["text"].strip()
        tooltip = self.tooltip or {"text": "", "style": ""}
        style = tooltip["style"].replace(" ", "")
        return {
            "ids": self.ids,
            "elementCounts": self.counts,
            "h1": getattr(self, "h1_record", {"text": ""})["text"].strip(),
            "hangBars": self.hang_bars,
            "flames": self.flames,
            "tooltip": {"visible": "display:block" in style, "text": tooltip["text"]},
        }


def summarise_dom(path):
    parser = DOMSummary()
    with open(path, encoding="utf-8") as handle:
        parser.feed(handle.read())
    parser.close()
    return parser.result()


def main(argv):
    if len(argv) < 3 or argv[1] not in ("png", "dom"):
        sys.stderr.write(__doc__)
        return 2
    try:
        if argv[1] == "png":
            named = [tuple(item.split("=", 1)) for item in argv[3:]]
            summary = summarise_png(argv[2], named)
        else:
            summary = summarise_dom(argv[2])
    except (OSError, ValueError) as error:
        sys.stderr.write("cannot read %s: %s\n" % (argv[2], error))
        return 1
    json.dump(summary, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
