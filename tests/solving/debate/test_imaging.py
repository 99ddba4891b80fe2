"""Deterministic image operations of the Level-4 problem parser (no database, no network)."""

import io

import numpy as np
import pytest
from PIL import Image, ImageDraw

from llm.types import ImageInput
from solving.debate import imaging
from solving.debate.imaging import ImageDecodeError, Split


def png(img: Image.Image) -> ImageInput:
    return imaging.encode_png(img)


def diagram(width: int = 300, height: int = 200) -> Image.Image:
    img = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(img)
    draw.rectangle((20, 20, width - 20, height - 20), outline="black", width=3)
    draw.line((20, height - 20, width - 20, 20), fill="black", width=2)
    return img


def dark(img: Image.Image) -> np.ndarray:
    return np.asarray(img.convert("L")) < 128


def test_sharpen_crops_to_content_bbox_without_resizing_and_keeps_strokes():
    img = Image.new("RGB", (120, 90), (250, 250, 250))
    draw = ImageDraw.Draw(img)
    draw.line((30, 20, 90, 20), fill="black", width=3)  # rows 19..21, columns 29..90
    draw.line((30, 20, 30, 70), fill="black", width=3)  # down to row 70
    out, report = imaging.sharpen(img)
    assert report.bbox == (29, 19, 91, 71)
    assert out.size == (91 - 29, 71 - 19)  # exactly the content bounding box: no resize, no padding
    before = dark(img)[19:71, 29:91]
    after = dark(out)
    assert np.array_equal(before, after)  # every stroke pixel kept at the same relative position
    assert report.background == (250, 250, 250)


def test_sharpen_removes_isolated_specks_and_whitens_near_white():
    img = Image.new("RGB", (100, 100), (255, 255, 255))
    draw = ImageDraw.Draw(img)
    draw.rectangle((40, 40, 60, 60), outline="black", width=2)
    img.putpixel((5, 5), (0, 0, 0))  # isolated 1-pixel speck outside the figure
    img.putpixel((50, 50), (10, 10, 10))  # isolated speck inside the figure
    img.putpixel((45, 52), (240, 240, 238))  # near-white noise
    out, report = imaging.sharpen(img)
    assert report.specks_removed == 2
    assert report.bbox == (40, 40, 61, 61)  # the outside speck does not widen the crop
    assert out.getpixel((10, 10)) == (255, 255, 255)  # (50, 50) in the input
    assert out.getpixel((5, 12)) == (255, 255, 255)  # (45, 52) in the input
    assert dark(out)[0, :].all() and dark(out)[:, 0].all()  # the box outline survives


def test_sharpen_keeps_a_two_pixel_wide_connected_stroke_but_drops_two_pixel_specks():
    img = Image.new("RGB", (60, 60), "white")
    draw = ImageDraw.Draw(img)
    draw.line((10, 30, 50, 30), fill="black", width=1)  # a thin but long connected stroke
    img.putpixel((5, 5), (0, 0, 0))
    img.putpixel((6, 6), (0, 0, 0))  # a diagonal 2-pixel speck
    out, report = imaging.sharpen(img)
    assert report.specks_removed == 1
    assert out.size == (41, 1)
    assert dark(out).all()


def test_sharpen_blank_image_is_unchanged_and_uses_border_background():
    blank = Image.new("RGB", (40, 30), (200, 210, 220))
    out, report = imaging.sharpen(blank)
    assert report.bbox is None and out.size == (40, 30)
    assert out.tobytes() == blank.tobytes()


def test_sharpen_on_a_dark_background_keeps_the_background_colour():
    img = Image.new("RGB", (50, 50), (20, 20, 20))
    ImageDraw.Draw(img).rectangle((10, 10, 40, 40), outline=(240, 240, 240), width=2)
    out, report = imaging.sharpen(img)
    assert report.background == (20, 20, 20)
    assert out.size == (31, 31)
    assert out.getpixel((15, 15)) == (20, 20, 20)


@pytest.mark.parametrize("side, orientation", [("top", "horizontal"), ("left", "vertical")])
def test_profile_split_cuts_in_the_gutter_between_text_and_diagram(side, orientation):
    composed = imaging.load(
        imaging.compose_image_only("A block of mass 2 kg rests on a table.", png(diagram()), text_side=side)
    )
    split = imaging.profile_split(composed)
    assert split.orientation == orientation and split.text_side == side
    text, figure = imaging.split_image(composed, split)
    mask = dark(composed)
    cut = imaging.boundary_pixel(composed.size, split)
    # No ink on the boundary line, ink on both sides of it.
    line = mask[cut, :] if orientation == "horizontal" else mask[:, cut]
    assert not line.any()
    assert dark(text).any() and dark(figure).any()
    if orientation == "horizontal":
        assert text.size[1] + figure.size[1] == composed.size[1]
        assert figure.size[1] >= 200  # the whole diagram is on the diagram side
    else:
        assert text.size[0] + figure.size[0] == composed.size[0]
        assert figure.size[0] >= 300


@pytest.mark.parametrize("size", [(1, 1), (1, 7), (7, 1), (3, 3), (40, 2)])
def test_profile_split_never_fails_on_degenerate_images(size):
    img = Image.new("RGB", size, "white")
    split = imaging.profile_split(img)
    text, figure = imaging.split_image(img, split)
    assert figure.size[0] >= 1 and figure.size[1] >= 1
    assert 0 < split.fraction < 1 or min(size) < 2


def test_profile_split_without_a_gap_cuts_the_quietest_middle_row():
    img = Image.new("RGB", (50, 100), "white")
    draw = ImageDraw.Draw(img)
    for y in range(1, 99):
        draw.line((5, y, 15 if y == 60 else 40, y), fill="black")  # row 60 has the least ink
    split = imaging.profile_split(img)
    assert split == Split("horizontal", 0.6)


def test_draw_boundary_marks_the_cut_in_red_without_changing_size():
    img = diagram()
    marked = imaging.draw_boundary(img, Split("horizontal", 0.25))
    assert marked.size == img.size
    red = np.asarray(marked)[50]
    assert (red[:, 0] > 200).all() and (red[:, 1] < 30).all()
    assert img.getpixel((100, 50)) == (255, 255, 255)  # the original is untouched


def test_compose_image_only_is_deterministic_and_validates_inputs():
    first = imaging.compose_image_only("F = 3 N", png(diagram()))
    assert first.data == imaging.compose_image_only("F = 3 N", png(diagram())).data
    assert first.media_type == "image/png"
    with pytest.raises(ValueError):
        imaging.compose_image_only("x", png(diagram()), text_side="bottom")
    with pytest.raises(ImageDecodeError):
        imaging.compose_image_only("x", ImageInput(data=b"not an image"))


def test_load_composites_transparency_on_white():
    rgba = Image.new("RGBA", (4, 4), (0, 0, 0, 0))
    buffer = io.BytesIO()
    rgba.save(buffer, format="PNG")
    assert imaging.load(ImageInput(buffer.getvalue())).getpixel((0, 0)) == (255, 255, 255)


def test_tesseract_reads_the_text_region_of_a_composed_image():
    composed = imaging.load(imaging.compose_image_only("A spring stretches under load", png(diagram())))
    text_region, _ = imaging.split_image(composed, imaging.profile_split(composed))
    words = imaging.tesseract_text(text_region).lower().split()
    assert {"spring", "stretches", "under", "load"} <= set(words)
