"""Scene families: each draws a diagram, declares its PhysGraph and writes the problem text.

A scene function receives a ``ProblemBuilder``, a seeded ``random.Random`` and the language, and
returns the private ``SceneAnswer`` (numeric answer computed from the drawn parameters plus a
short worked solution). Every family mixes quantities read from a diagram glyph (later T03-image
probes) with quantities stated only in the text (T03-text), and names at least one entity with an
explicit ``<noun> <symbol>`` mention bound by ``refers_to`` (T02-single).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass

from annotation.demo.builder import ProblemBuilder
from annotation.demo.drawing import PixelBox

G = 9.8
K_COULOMB = 8.99e9


@dataclass(frozen=True)
class SceneAnswer:
    family: str
    domain: str
    answer: str
    solution: str
    answer_type: str = "calc"


def sig3(value: float) -> str:
    """Three significant figures, plain decimal notation."""
    if value == 0:
        return "0"
    digits = max(0, 2 - math.floor(math.log10(abs(value))))
    return f"{value:.{digits}f}"


def pick_size(rng: random.Random, ratio: float) -> tuple[int, int]:
    width = rng.choice([520, 560, 600, 640, 680, 720])
    return width, round(width * ratio)


# -- 1. block on a rough incline ---------------------------------------------------------------
def incline(b: ProblemBuilder, rng: random.Random, zh: bool) -> SceneAnswer:
    c, w, h = b.canvas, b.canvas.width, b.canvas.height
    theta = rng.choice([20, 25, 30, 35, 37, 40, 45])
    t = math.radians(theta)
    mu = rng.choice([m for m in (0.10, 0.15, 0.20, 0.25, 0.30, 0.35) if m < math.tan(t) - 0.08])
    mass = rng.choice([1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0])
    y0 = h * rng.uniform(0.80, 0.86)
    x0 = w * rng.uniform(0.08, 0.14)
    base = min(w * 0.72, (y0 - h * 0.14) / math.tan(t))
    a, bb, top = (x0, y0), (x0 + base, y0), (x0 + base, y0 - base * math.tan(t))

    ground = b.shape(
        "line_segment", c.hatch(x0 - 20, min(w - 10, x0 + base + 30), y0 + 2, up=False), subtype="ground"
    )
    wedge = b.shape(
        "object_shape", c.polygon([a, bb, top], fill=(236, 236, 236)), subtype="wedge", keypoints=(a, bb, top)
    )
    side = w * rng.uniform(0.09, 0.11)
    along = math.hypot(base, base * math.tan(t)) * rng.uniform(0.42, 0.58)
    u = (math.cos(t), -math.sin(t))
    n = (-math.sin(t), -math.cos(t))
    p0 = (a[0] + u[0] * along, a[1] + u[1] * along)
    p1 = (p0[0] + u[0] * side, p0[1] + u[1] * side)
    p2 = (p1[0] + n[0] * side, p1[1] + n[1] * side)
    p3 = (p0[0] + n[0] * side, p0[1] + n[1] * side)
    block = b.shape("object_shape", c.polygon([p0, p1, p2, p3]), subtype="block")
    centre = ((p0[0] + p2[0]) / 2, (p0[1] + p2[1]) / 2)
    label_a = b.glyph((centre[0] - u[0] * side * 0.2, centre[1] - u[1] * side * 0.2), "A", size=20)
    mass_glyph = b.glyph(
        (centre[0] + n[0] * (side * 0.5 + 26) - 8, centre[1] + n[1] * (side * 0.5 + 26)),
        f"{mass:.1f} kg",
        size=17,
    )
    angle_mark = b.shape("angle_mark", c.arc(a, 46, 360 - theta, 360), subtype="angle")
    angle_glyph = b.glyph((a[0] + 100, a[1] - 13), f"{theta}°", size=17)
    tail = (centre[0] + u[0] * side * 0.22, centre[1] + u[1] * side * 0.22)
    weight_head = (tail[0], tail[1] + 64)
    weight_arrow = b.shape("arrow", c.arrow(tail, weight_head), subtype="force")
    weight_glyph = b.glyph((tail[0] + 18, weight_head[1] + 2), "mg", size=16)

    plane = b.entity("inclined_plane", "Inclined plane", represents=(wedge,))
    body = b.entity("body", "Block A", "A", represents=(block,), labels=(label_a,))
    floor = b.entity("surface", "Ground", represents=(ground,))
    weight = b.entity("force", "Weight of block A", "mg", represents=(weight_arrow,), labels=(weight_glyph,))

    mu_text = f"{mu:.2f}"
    if zh:
        b.set_text(
            f"如图所示，[[entity:block:物块A]]从[[constraint:rest:静止]]开始沿粗糙斜面下滑，物块与斜面间的"
            f"动摩擦因数为[[quantity:mu:{mu_text}]]。物块的质量和斜面倾角已在图中标出，取 g = 9.8 m/s²。",
            "求物块A沿斜面下滑时[[query_target:target:加速度]]的大小。",
        )
    else:
        b.set_text(
            f"As shown in the figure, [[entity:block:block A]] is released from [[constraint:rest:rest]] on a "
            f"rough inclined plane. The coefficient of kinetic friction between the block and the plane is "
            f"[[quantity:mu:{mu_text}]]. The mass of the block and the angle of the incline are marked in the "
            f"figure. Take g = 9.8 m/s².",
            "Find the magnitude of the [[query_target:target:acceleration]] of block A as it slides down the plane.",
        )
    b.refer("block", body)
    b.quantity("mass", "m", f"{mass:.1f}", "kg", body, glyphs=(mass_glyph,))
    q_angle = b.quantity("angle", "\\theta", str(theta), "^\\circ", plane, glyphs=(angle_glyph,))
    q_mu = b.quantity("coefficient_of_kinetic_friction", "\\mu_k", mu_text, "", plane, mentions=("mu",))
    b.constraint("initial_rest", [body], "released from rest", mentions=("rest",))
    b.relation("rests_on", body, plane, visuals=(block, wedge))
    b.relation("inclined_at", plane, floor, quantity_id=q_angle, visuals=(angle_mark, angle_glyph))
    b.relation("friction_between", body, plane, quantity_id=q_mu, mentions=("mu",))
    b.relation("acts_on", weight, body, visuals=(weight_arrow,))
    b.query_target("target", "acceleration", "a", [body])

    acc = G * (math.sin(t) - mu * math.cos(t))
    answer = f"{sig3(acc)} m/s²"
    solution = (
        f"Along the incline, mg sin θ − μmg cos θ = ma, so a = g(sin θ − μ cos θ) = 9.8 × (sin {theta}° − "
        f"{mu_text} × cos {theta}°) ≈ {answer}. The mass ({mass:.1f} kg) cancels."
    )
    return SceneAnswer("incline", "mechanics", answer, solution)


# -- 2. Atwood machine -------------------------------------------------------------------------
def atwood(b: ProblemBuilder, rng: random.Random, zh: bool) -> SceneAnswer:
    c, w, h = b.canvas, b.canvas.width, b.canvas.height
    masses = [x / 2 for x in range(2, 13)]
    m_a = rng.choice(masses)
    m_b = rng.choice([m for m in masses if m != m_a])
    ask_tension = rng.random() < 0.4
    cx, cy = w * rng.uniform(0.42, 0.58), h * rng.uniform(0.24, 0.28)
    r = w * rng.uniform(0.065, 0.08)
    ceiling_y = h * 0.07
    ceiling = b.shape("line_segment", c.hatch(cx - 80, cx + 80, ceiling_y, up=True), subtype="ceiling")
    hanger = c.line((cx, ceiling_y), (cx, cy))
    pulley_box = c.circle((cx, cy), r, fill=(236, 236, 236)).union(hanger)
    c.dot((cx, cy), 4)
    pulley = b.shape("circle", pulley_box, subtype="pulley", center=(cx, cy), radius=r)

    side_a = w * (0.075 + 0.006 * m_a)
    side_b = w * (0.075 + 0.006 * m_b)
    top_a = h * rng.uniform(0.52, 0.62)
    top_b = h * rng.uniform(0.48, 0.66)
    left_x, right_x = cx - r, cx + r
    rope_box = c.line((left_x, cy), (left_x, top_a)).union(c.line((right_x, cy), (right_x, top_b)))
    c.arc((cx, cy), r, 180, 360)
    rope = b.shape(
        "polyline",
        rope_box.union(PixelBox(left_x - 2, cy - r - 2, right_x + 3, cy)),
        subtype="string",
        keypoints=((left_x, top_a), (left_x, cy), (right_x, cy), (right_x, top_b)),
    )
    box_a = c.rect(left_x - side_a / 2, top_a, left_x + side_a / 2, top_a + side_a)
    box_b = c.rect(right_x - side_b / 2, top_b, right_x + side_b / 2, top_b + side_b)
    block_a = b.shape("object_shape", box_a, subtype="block")
    block_b = b.shape("object_shape", box_b, subtype="block")
    glyph_a = b.glyph((left_x, top_a + side_a / 2), "A", size=20)
    glyph_b = b.glyph((right_x, top_b + side_b / 2), "B", size=20)
    mass_glyph = b.glyph((left_x - side_a / 2 - 38, top_a + side_a / 2), f"{m_a:.1f} kg", size=17)

    body_ceiling = b.entity("surface", "Ceiling", represents=(ceiling,))
    body_pulley = b.entity("pulley", "Pulley", represents=(pulley,))
    body_rope = b.entity("rope", "String", represents=(rope,))
    body_a = b.entity("body", "Block A", "A", represents=(block_a,), labels=(glyph_a,))
    body_b = b.entity("body", "Block B", "B", represents=(block_b,), labels=(glyph_b,))

    if zh:
        b.set_text(
            f"如图所示，[[entity:blockA:物块A]]和物块B分别系在跨过[[constraint:pulley:光滑定滑轮]]的"
            f"[[constraint:string:轻质细绳]]两端，[[entity:blockB:物块B]]的质量为[[quantity:mB:{m_b:.1f} kg]]，"
            f"物块A的质量已在图中标出。系统由静止释放，取 g = 9.8 m/s²。",
            "求细绳中的[[query_target:target:张力]]大小。"
            if ask_tension
            else "求物块A的[[query_target:target:加速度]]大小。",
        )
    else:
        b.set_text(
            f"As shown in the figure, [[entity:blockA:block A]] and block B hang at the two ends of a "
            f"[[constraint:string:light inextensible string]] that passes over a "
            f"[[constraint:pulley:frictionless pulley]]. [[entity:blockB:Block B]] has a mass of "
            f"[[quantity:mB:{m_b:.1f} kg]]; the mass of block A is marked in the figure. The system is released "
            f"from rest. Take g = 9.8 m/s².",
            "Find the [[query_target:target:tension]] in the string while the blocks move."
            if ask_tension
            else "Find the magnitude of the [[query_target:target:acceleration]] of block A.",
        )
    b.refer("blockA", body_a)
    b.refer("blockB", body_b)
    b.quantity("mass", "m_A", f"{m_a:.1f}", "kg", body_a, glyphs=(mass_glyph,))
    b.quantity("mass", "m_B", f"{m_b:.1f}", "kg", body_b, mentions=("mB",))
    b.constraint("massless_inextensible", [body_rope], "light inextensible string", mentions=("string",))
    b.constraint("frictionless", [body_pulley], "frictionless pulley", mentions=("pulley",))
    b.relation("supported_by", body_pulley, body_ceiling, visuals=(pulley, ceiling))
    b.relation("passes_over", body_rope, body_pulley, visuals=(rope, pulley))
    b.relation("attached_to", body_a, body_rope, visuals=(block_a, rope))
    b.relation("attached_to", body_b, body_rope, visuals=(block_b, rope))

    acc = abs(m_b - m_a) * G / (m_a + m_b)
    tension = 2 * m_a * m_b * G / (m_a + m_b)
    if ask_tension:
        b.query_target("target", "tension", "T", [body_rope])
        answer = f"{sig3(tension)} N"
        solution = (
            f"For the two blocks, a = |m_B − m_A| g/(m_A + m_B) = {sig3(acc)} m/s². Then "
            f"T = 2 m_A m_B g/(m_A + m_B) = 2 × {m_a:.1f} × {m_b:.1f} × 9.8/{m_a + m_b:.1f} ≈ {answer}."
        )
    else:
        b.query_target("target", "acceleration", "a", [body_a])
        answer = f"{sig3(acc)} m/s²"
        solution = (
            f"Newton's second law for the system: (m_B − m_A) g = (m_A + m_B) a, so a = "
            f"|{m_b:.1f} − {m_a:.1f}| × 9.8/{m_a + m_b:.1f} ≈ {answer}; block A moves "
            f"{'up' if m_b > m_a else 'down'}."
        )
    return SceneAnswer("atwood", "mechanics", answer, solution)


# -- 3. beam hung by two cables ----------------------------------------------------------------
def beam(b: ProblemBuilder, rng: random.Random, zh: bool) -> SceneAnswer:
    c, w, h = b.canvas, b.canvas.width, b.canvas.height
    length = rng.choice([2.0, 3.0, 4.0, 5.0, 6.0])
    w_beam = rng.choice([100, 150, 200, 250, 300])
    w_load = rng.choice(range(200, 650, 50))
    steps = [x / 2 for x in range(1, int(length * 2))]
    dist = rng.choice(steps)
    ask_left = rng.random() < 0.5
    xl, xr = w * rng.uniform(0.14, 0.2), w * rng.uniform(0.8, 0.86)
    ceiling_y, beam_y = h * 0.08, h * rng.uniform(0.34, 0.38)
    ceiling = b.shape("line_segment", c.hatch(xl - 30, xr + 30, ceiling_y, up=True), subtype="ceiling")
    cable_l = b.shape("line_segment", c.line((xl, ceiling_y), (xl, beam_y)), subtype="cable")
    cable_r = b.shape("line_segment", c.line((xr, ceiling_y), (xr, beam_y)), subtype="cable")
    rod = b.shape("object_shape", c.rect(xl - 6, beam_y, xr + 6, beam_y + 14), subtype="beam")
    t1 = b.glyph((xl + 20, (ceiling_y + beam_y) / 2), "T1", size=18)
    t2 = b.glyph((xr - 20, (ceiling_y + beam_y) / 2), "T2", size=18)
    xd = xl + (xr - xl) * dist / length
    side = w * 0.08
    hook_bottom = beam_y + 14 + h * 0.1
    string = b.shape("line_segment", c.line((xd, beam_y + 14), (xd, hook_bottom)), subtype="string")
    load = b.shape(
        "object_shape", c.rect(xd - side / 2, hook_bottom, xd + side / 2, hook_bottom + side), subtype="block"
    )
    glyph_c = b.glyph((xd, hook_bottom + side / 2), "C", size=20)
    load_glyph = b.glyph(
        (xd + side / 2 + 34 if xd < w * 0.7 else xd - side / 2 - 34, hook_bottom + side / 2),
        f"{w_load} N",
        size=17,
    )
    dim_y = hook_bottom + side + h * 0.08
    c.line((xl - 6, beam_y + 18), (xl - 6, dim_y + 6), width=1)
    c.line((xr + 6, beam_y + 18), (xr + 6, dim_y + 6), width=1)
    dim = b.shape("line_segment", c.double_arrow((xl - 6, dim_y), (xr + 6, dim_y)), subtype="dimension")
    len_glyph = b.glyph(((xl + xr) / 2, dim_y + 16), f"{length:.1f} m", size=17)

    body_ceiling = b.entity("surface", "Ceiling", represents=(ceiling,))
    body_cl = b.entity("rope", "Left cable", represents=(cable_l,))
    body_cr = b.entity("rope", "Right cable", represents=(cable_r,))
    body_beam = b.entity("rod", "Uniform beam", represents=(rod,))
    body_string = b.entity("rope", "Short string", represents=(string,))
    body_c = b.entity("body", "Block C", "C", represents=(load,), labels=(glyph_c,))

    if zh:
        b.set_text(
            f"如图所示，重为[[quantity:Wb:{w_beam} N]]的均匀横梁由两端的竖直钢索悬挂，并"
            f"[[constraint:eq:保持水平静止]]。[[entity:blockC:物块C]]用细绳挂在距横梁左端[[quantity:d:{dist:.1f} m]]处。"
            f"横梁的长度和物块C的重力已在图中标出。",
            f"求{'左' if ask_left else '右'}侧钢索的[[query_target:target:拉力]]{'T1' if ask_left else 'T2'}。",
        )
    else:
        b.set_text(
            f"A uniform beam weighing [[quantity:Wb:{w_beam} N]] hangs from two vertical cables attached to its "
            f"ends and is [[constraint:eq:held horizontal and at rest]], as shown in the figure. "
            f"[[entity:blockC:Block C]] hangs from the beam on a short string at a point "
            f"[[quantity:d:{dist:.1f} m]] from the left end. The length of the beam and the weight of block C are "
            f"given in the figure.",
            f"Find the [[query_target:target:tension]] {'T1 in the left' if ask_left else 'T2 in the right'} cable.",
        )
    b.refer("blockC", body_c)
    q_t1 = b.quantity("tension", "T_1", "", "", body_cl, glyphs=(t1,))
    q_t2 = b.quantity("tension", "T_2", "", "", body_cr, glyphs=(t2,))
    b.quantity("weight", "W_C", str(w_load), "N", body_c, glyphs=(load_glyph,))
    b.quantity("length", "L", f"{length:.1f}", "m", body_beam, glyphs=(len_glyph,))
    b.quantity("weight", "W", str(w_beam), "N", body_beam, mentions=("Wb",))
    b.quantity("distance", "d", f"{dist:.1f}", "m", body_string, mentions=("d",))
    b.constraint("static_equilibrium", [body_beam], "held horizontal and at rest", mentions=("eq",))
    b.relation("hangs_from", body_cl, body_ceiling, visuals=(cable_l, ceiling))
    b.relation("hangs_from", body_cr, body_ceiling, visuals=(cable_r, ceiling))
    b.relation("pulls", body_cl, body_beam, quantity_id=q_t1, visuals=(cable_l, rod))
    b.relation("pulls", body_cr, body_beam, quantity_id=q_t2, visuals=(cable_r, rod))
    b.relation("attached_to", body_string, body_beam, visuals=(string, rod, dim))
    b.relation("hangs_from", body_c, body_string, visuals=(load, string))

    right = (w_beam * length / 2 + w_load * dist) / length
    left = w_beam + w_load - right
    value = left if ask_left else right
    b.query_target("target", "tension", "T_1" if ask_left else "T_2", [body_cl if ask_left else body_cr])
    answer = f"{sig3(value)} N"
    solution = (
        f"Torques about the left end: T2·L = W·L/2 + W_C·d, so T2 = ({w_beam} × {length / 2:.1f} + "
        f"{w_load} × {dist:.1f})/{length:.1f} = {sig3(right)} N. Vertical balance: T1 = W + W_C − T2 = "
        f"{sig3(left)} N. Answer: {answer}."
    )
    return SceneAnswer("beam", "mechanics", answer, solution)


# -- 4. series or parallel circuit --------------------------------------------------------------
def _zigzag(c, a: tuple[float, float], b_: tuple[float, float], teeth: int = 6, amp: float = 8) -> PixelBox:
    (x0, y0), (x1, y1) = a, b_
    length = math.hypot(x1 - x0, y1 - y0)
    ux, uy = (x1 - x0) / length, (y1 - y0) / length
    nx, ny = -uy, ux
    points = [a]
    for i in range(1, 2 * teeth):
        s = length * i / (2 * teeth)
        sign = 1 if i % 2 else -1
        points.append((x0 + ux * s + nx * amp * sign, y0 + uy * s + ny * amp * sign))
    points.append(b_)
    return c.polyline(points)


def circuit(b: ProblemBuilder, rng: random.Random, zh: bool) -> SceneAnswer:
    c, w, h = b.canvas, b.canvas.width, b.canvas.height
    emf = rng.choice([6, 9, 12, 18, 24])
    r1 = rng.choice([2, 3, 4, 5, 6, 8, 10])
    r2 = rng.choice([2, 3, 4, 6, 8, 12])
    parallel = rng.random() < 0.5
    x0, x1 = w * rng.uniform(0.14, 0.2), w * rng.uniform(0.78, 0.84)
    y0, y1 = h * rng.uniform(0.16, 0.22), h * rng.uniform(0.8, 0.85)
    ym = (y0 + y1) / 2
    wires: list[PixelBox] = []
    # battery on the left side: long plate (+) above short plate (-)
    wires.append(c.line((x0, y0), (x0, ym - 8)))
    wires.append(c.line((x0, ym + 8), (x0, y1)))
    battery = b.shape(
        "component_symbol",
        c.line((x0 - 20, ym - 6), (x0 + 20, ym - 6), width=3).union(
            c.line((x0 - 11, ym + 6), (x0 + 11, ym + 6), width=5)
        ),
        subtype="battery",
    )
    emf_glyph = b.glyph((x0 - 50, ym), f"{emf} V", size=17)
    # switch on the bottom wire, drawn open
    sx = (x0 + x1) / 2 if not parallel else x0 + (x1 - x0) * 0.3
    wires.append(c.line((x0, y1), (sx - 24, y1)))
    switch_box = (
        c.dot((sx - 22, y1)).union(c.dot((sx + 22, y1))).union(c.line((sx - 22, y1), (sx + 18, y1 - 20)))
    )
    switch = b.shape("component_symbol", switch_box, subtype="switch")
    switch_glyph = b.glyph((sx, y1 + 22), "S", size=18)
    if parallel:
        xa, xb = x0 + (x1 - x0) * 0.62, x1
        wires.append(c.line((sx + 24, y1), (xb, y1)))
        wires.append(c.line((x0, y0), (xb, y0)))
        res1 = b.shape("component_symbol", _zigzag(c, (xa, y0 + 40), (xa, y1 - 40)), subtype="resistor")
        wires.append(c.line((xa, y0), (xa, y0 + 40)))
        wires.append(c.line((xa, y1 - 40), (xa, y1)))
        res2 = b.shape("component_symbol", _zigzag(c, (xb, y0 + 40), (xb, y1 - 40)), subtype="resistor")
        wires.append(c.line((xb, y0), (xb, y0 + 40)))
        wires.append(c.line((xb, y1 - 40), (xb, y1)))
        c.dot((xa, y0))
        c.dot((xa, y1))
        r1_glyph = b.glyph((xa - 34, ym - 14), "R1", size=18)
        r1_value = b.glyph((xa - 36, ym + 14), f"{r1} Ω", size=17)
        r2_glyph = b.glyph((xb - 34, ym), "R2", size=18)
    else:
        xa = (x0 + x1) / 2
        wires.append(c.line((sx + 24, y1), (x1, y1)))
        wires.append(c.line((x0, y0), (xa - 50, y0)))
        res1 = b.shape("component_symbol", _zigzag(c, (xa - 50, y0), (xa + 50, y0)), subtype="resistor")
        wires.append(c.line((xa + 50, y0), (x1, y0)))
        wires.append(c.line((x1, y0), (x1, ym - 50)))
        res2 = b.shape("component_symbol", _zigzag(c, (x1, ym - 50), (x1, ym + 50)), subtype="resistor")
        wires.append(c.line((x1, ym + 50), (x1, y1)))
        r1_glyph = b.glyph((xa - 18, y0 - 26), "R1", size=18)
        r1_value = b.glyph((xa + 24, y0 - 26), f"{r1} Ω", size=17)
        r2_glyph = b.glyph((x1 - 36, ym), "R2", size=18)
    wire_box = wires[0]
    for part in wires[1:]:
        wire_box = wire_box.union(part)
    wire = b.shape("polyline", wire_box, subtype="wire")

    body_battery = b.entity("battery", "Battery", represents=(battery,))
    body_switch = b.entity("switch", "Switch S", "S", represents=(switch,), labels=(switch_glyph,))
    body_r1 = b.entity("resistor", "Resistor R1", "R1", represents=(res1,), labels=(r1_glyph,))
    body_r2 = b.entity("resistor", "Resistor R2", "R2", represents=(res2,), labels=(r2_glyph,))
    body_wire = b.entity("wire", "Connecting wires", represents=(wire,))

    if zh:
        b.set_text(
            f"如图所示电路中，电源内阻[[constraint:ideal:不计]]，[[entity:r2:电阻R2]]的阻值为[[quantity:r2v:{r2} Ω]]。"
            "电源电动势和电阻R1的阻值已在图中标出。",
            "闭合开关S后，求通过电阻R1的[[query_target:target:电流]]。",
        )
    else:
        b.set_text(
            f"In the circuit shown, the battery has [[constraint:ideal:negligible internal resistance]] and "
            f"[[entity:r2:resistor R2]] has a resistance of [[quantity:r2v:{r2} Ω]]. The emf of the battery and "
            f"the resistance of R1 are marked in the figure.",
            "After switch S is closed, find the [[query_target:target:current]] through resistor R1.",
        )
    b.refer("r2", body_r2)
    b.quantity("emf", "\\mathcal{E}", str(emf), "V", body_battery, glyphs=(emf_glyph,))
    b.quantity("resistance", "R_1", str(r1), "\\Omega", body_r1, glyphs=(r1_value,))
    b.quantity("resistance", "R_2", str(r2), "\\Omega", body_r2, mentions=("r2v",))
    b.constraint("ideal_source", [body_battery], "negligible internal resistance", mentions=("ideal",))
    predicate = "in_parallel_with" if parallel else "in_series_with"
    b.relation(predicate, body_r1, body_r2, visuals=(res1, res2, wire))
    b.relation("in_series_with", body_switch, body_battery, visuals=(switch, battery, wire))
    b.relation("connected_by", body_battery, body_wire, visuals=(battery, wire))
    b.query_target("target", "current", "I_1", [body_r1])

    if parallel:
        current = emf / r1
        solution = (
            f"R1 and R2 are in parallel across the ideal battery, so each has the full {emf} V across it: "
            f"I1 = ε/R1 = {emf}/{r1} ≈ {sig3(current)} A."
        )
    else:
        current = emf / (r1 + r2)
        solution = (
            f"R1 and R2 are in series: I = ε/(R1 + R2) = {emf}/({r1} + {r2}) ≈ {sig3(current)} A, the same "
            f"current flows through R1."
        )
    return SceneAnswer("circuit", "electromagnetism", f"{sig3(current)} A", solution)


# -- 5. thin converging lens ---------------------------------------------------------------------
def lens(b: ProblemBuilder, rng: random.Random, zh: bool) -> SceneAnswer:
    c, w, h = b.canvas, b.canvas.width, b.canvas.height
    focal = rng.choice([8, 10, 12, 15, 20])
    u = round(focal * rng.choice([1.5, 2.5, 3.0, 4.0]))
    ay = h * rng.uniform(0.55, 0.62)
    xl = w * rng.uniform(0.58, 0.64)
    scale = (xl - w * 0.08) / max(u, 2 * focal)
    axis = b.shape("axis", c.line((w * 0.03, ay), (w * 0.97, ay), width=1), subtype="principal_axis")
    lens_half = h * 0.3
    lens_box = c.double_arrow((xl, ay + lens_half), (xl, ay - lens_half))
    lens_shape = b.shape("component_symbol", lens_box, subtype="converging_lens")
    lens_glyph = b.glyph((xl + 16, ay - lens_half + 4), "L", size=18)
    f_left, f_right = xl - focal * scale, xl + focal * scale
    dot_l = b.shape("point_mark", c.dot((f_left, ay)), subtype="focal_point")
    dot_r = b.shape("point_mark", c.dot((f_right, ay)), subtype="focal_point")
    fl_glyph = b.glyph((f_left, ay + 18), "F", size=17)
    fr_glyph = b.glyph((f_right, ay + 18), "F", size=17)
    xo = xl - u * scale
    obj_height = h * rng.uniform(0.14, 0.2)
    obj = b.shape("arrow", c.arrow((xo, ay), (xo, ay - obj_height), width=3), subtype="object")
    obj_glyph = b.glyph((xo - 14, ay - obj_height - 4), "P", size=18)
    dim_y = ay + h * 0.16
    c.line((xo, ay + 4), (xo, dim_y + 6), width=1)
    if dim_y > ay + lens_half:
        c.line((xl, ay + lens_half + 2), (xl, dim_y + 6), width=1)
    dim = b.shape("line_segment", c.double_arrow((xo, dim_y), (xl, dim_y)), subtype="dimension")
    u_glyph = b.glyph(((xo + xl) / 2, dim_y + 15), f"{u} cm", size=17)

    b.entity("unknown_physical", "Principal axis", represents=(axis,), subtype="principal_axis")
    body_lens = b.entity(
        "unknown_physical",
        "Lens L",
        "L",
        represents=(lens_shape,),
        labels=(lens_glyph,),
        subtype="thin_converging_lens",
    )
    focus_l = b.entity("point", "Focal point F (object side)", "F", represents=(dot_l,), labels=(fl_glyph,))
    focus_r = b.entity("point", "Focal point F (image side)", "F", represents=(dot_r,), labels=(fr_glyph,))
    body_obj = b.entity("body", "Object P", "P", represents=(obj,), labels=(obj_glyph,), subtype="object")

    if zh:
        b.set_text(
            f"如图所示，[[constraint:thin:薄]]凸透镜L的焦距为[[quantity:f:{focal} cm]]，[[entity:obj:物体P]]直立在"
            "主光轴上，它到透镜的距离已在图中标出。",
            "求物体P经透镜所成的像到透镜的[[query_target:target:距离]]。",
        )
    else:
        b.set_text(
            f"A [[constraint:thin:thin converging lens]] L has a focal length of [[quantity:f:{focal} cm]]. "
            "[[entity:obj:Object P]] stands upright on the principal axis; its distance from the lens is shown "
            "in the figure.",
            "Find the [[query_target:target:image distance]] of object P, measured from the lens.",
        )
    b.refer("obj", body_obj)
    b.quantity("object_distance", "u", str(u), "cm", body_obj, glyphs=(u_glyph,))
    b.quantity("focal_length", "f", str(focal), "cm", body_lens, mentions=("f",))
    b.constraint("thin_lens", [body_lens], "thin converging lens", mentions=("thin",))
    b.relation("focal_point_of", focus_l, body_lens, visuals=(dot_l, lens_shape))
    b.relation("focal_point_of", focus_r, body_lens, visuals=(dot_r, lens_shape))
    b.relation("in_front_of", body_obj, body_lens, visuals=(obj, lens_shape, dim))
    b.query_target("target", "image_distance", "v", [body_obj], location=[body_lens])

    v = u * focal / (u - focal)
    solution = (
        f"Thin-lens equation 1/u + 1/v = 1/f: 1/v = 1/{focal} − 1/{u}, so v = uf/(u − f) = "
        f"{u} × {focal}/{u - focal} ≈ {sig3(v)} cm (a real, inverted image on the far side)."
    )
    return SceneAnswer("lens", "mixed", f"{sig3(v)} cm", solution)


# -- 6. two point charges --------------------------------------------------------------------------
def charges(b: ProblemBuilder, rng: random.Random, zh: bool) -> SceneAnswer:
    c, w, h = b.canvas, b.canvas.width, b.canvas.height
    values = [-6.0, -4.0, -3.0, -2.0, -1.0, 1.0, 2.0, 3.0, 4.0, 6.0]
    q1 = rng.choice(values)
    q2 = rng.choice([v for v in values if v != q1])
    sep = rng.choice([0.20, 0.30, 0.40, 0.50, 0.60])
    y = h * rng.uniform(0.45, 0.55)
    xa, xb = w * rng.uniform(0.16, 0.22), w * rng.uniform(0.78, 0.84)
    xp = (xa + xb) / 2
    radius = 17

    def charge_shape(x: float, q: float) -> str:
        box = c.circle((x, y), radius, fill=(236, 236, 236))
        c.line((x - 8, y), (x + 8, y), width=3)
        if q > 0:
            c.line((x, y - 8), (x, y + 8), width=3)
        return b.shape("circle", box, subtype="point_charge", center=(x, y), radius=radius)

    line = b.shape(
        "line_segment", c.line((xa + radius + 2, y), (xb - radius - 2, y), width=1), subtype="dashed_axis"
    )
    s1 = charge_shape(xa, q1)
    s2 = charge_shape(xb, q2)
    g1 = b.glyph((xa, y - radius - 18), "q1", size=18)
    g2 = b.glyph((xb, y - radius - 18), "q2", size=18)
    v1 = b.glyph((xa, y + radius + 20), f"{q1:+.1f} nC", size=17)
    p_mark = b.shape("point_mark", c.dot((xp, y), 4), subtype="field_point")
    p_glyph = b.glyph((xp, y - 20), "P", size=18)
    dim_y = y + h * 0.2
    c.line((xa, y + radius + 34), (xa, dim_y + 6), width=1)
    c.line((xb, y + radius + 4), (xb, dim_y + 6), width=1)
    dim = b.shape("line_segment", c.double_arrow((xa, dim_y), (xb, dim_y)), subtype="dimension")
    d_glyph = b.glyph((xp, dim_y + 16), f"{sep:.2f} m", size=17)

    body_q1 = b.entity("charge", "Charge q1", "q1", represents=(s1,), labels=(g1,))
    body_q2 = b.entity("charge", "Charge q2", "q2", represents=(s2,), labels=(g2,))
    body_p = b.entity("point", "Point P", "P", represents=(p_mark,), labels=(p_glyph,))
    b.entity("unknown_physical", "Line through the charges", represents=(line,), subtype="line")

    q2_text = f"{q2:+.1f} nC".replace("-", "−")
    if zh:
        b.set_text(
            f"如图所示，点电荷q1和q2固定在同一水平线上，q1的电荷量及两者间距已在图中标出，"
            f"[[entity:q2:电荷q2]]的电荷量为[[quantity:q2v:{q2_text}]]。[[entity:p:点P]]位于两电荷连线的"
            f"[[relation:mid:中点]]。静电力常量 k = 8.99 × 10⁹ N·m²/C²。",
            "求P点的[[query_target:target:电场强度]]大小。",
        )
    else:
        b.set_text(
            f"Point charges q1 and q2 are fixed on a horizontal line as shown; the charge of q1 and their "
            f"separation are marked in the figure, and [[entity:q2:charge q2]] carries [[quantity:q2v:{q2_text}]]. "
            f"[[entity:p:Point P]] is the [[relation:mid:midpoint]] of the segment joining them. "
            f"Use k = 8.99 × 10⁹ N·m²/C².",
            "Find the magnitude of the [[query_target:target:electric field]] at point P.",
        )
    b.refer("q2", body_q2)
    b.refer("p", body_p)
    b.quantity("charge", "q_1", f"{q1:+.1f}", "nC", body_q1, glyphs=(v1,))
    b.quantity("charge", "q_2", f"{q2:+.1f}", "nC", body_q2, mentions=("q2v",))
    b.relation("midpoint_of", body_p, body_q1, mentions=("mid",), visuals=(p_mark, s1))
    b.relation("midpoint_of", body_p, body_q2, mentions=("mid",), visuals=(p_mark, s2))
    b.relation("separated_from", body_q1, body_q2, visuals=(dim, d_glyph))
    b.query_target("target", "electric_field", "E", [body_p], location=[body_p])

    r = sep / 2
    ex = K_COULOMB * (q1 - q2) * 1e-9 / r**2
    direction = "toward q2" if ex > 0 else "toward q1"
    answer = f"{sig3(abs(ex))} N/C"
    solution = (
        f"At the midpoint r = {r:.2f} m from each charge. Taking +x from q1 to q2, E_x = k(q1 − q2)/r² = "
        f"8.99×10⁹ × ({q1:+.1f} − ({q2:+.1f}))×10⁻⁹/{r:.2f}² ≈ {sig3(ex)} N/C, so |E| ≈ {answer}, "
        f"pointing {direction}."
    )
    return SceneAnswer("charges", "electromagnetism", answer, solution)


# -- 7. horizontal spring-mass oscillator -------------------------------------------------------
def spring(b: ProblemBuilder, rng: random.Random, zh: bool) -> SceneAnswer:
    c, w, h = b.canvas, b.canvas.width, b.canvas.height
    mass = rng.choice([0.20, 0.25, 0.40, 0.50, 0.80, 1.0, 2.0])
    k = rng.choice([50, 80, 100, 120, 200, 250, 400])
    amp = rng.choice([0.05, 0.08, 0.10, 0.12, 0.15])
    ask_speed = rng.random() < 0.5
    floor_y = h * rng.uniform(0.68, 0.74)
    wall_x = w * rng.uniform(0.08, 0.12)
    wall_pts = [
        (wall_x - 14, floor_y - h * 0.4),
        (wall_x, floor_y - h * 0.4),
        (wall_x, floor_y),
        (wall_x - 14, floor_y),
    ]
    wall = b.shape("region", c.polygon(wall_pts, fill=(190, 190, 190)), subtype="wall")
    floor = b.shape("line_segment", c.hatch(wall_x, w * 0.94, floor_y + 2, up=False), subtype="floor")
    side = w * rng.uniform(0.12, 0.15)
    bx = w * rng.uniform(0.52, 0.62)
    block = b.shape("object_shape", c.rect(bx, floor_y - side, bx + side, floor_y), subtype="block")
    sy = floor_y - side / 2
    coil = b.shape("polyline", _zigzag(c, (wall_x + 2, sy), (bx, sy), teeth=9, amp=12), subtype="spring")
    k_glyph = b.glyph(((wall_x + bx) / 2, sy - 30), "k", size=20)
    glyph_b = b.glyph((bx + side / 2, floor_y - side / 2), "B", size=20)
    m_glyph = b.glyph((bx + side / 2, floor_y - side - 18), f"{mass:.2f} kg", size=17)

    body_wall = b.entity("surface", "Wall", represents=(wall,))
    body_floor = b.entity("surface", "Floor", represents=(floor,))
    body_spring = b.entity("spring", "Spring", represents=(coil,))
    body_b = b.entity("body", "Block B", "B", represents=(block,), labels=(glyph_b,))

    amp_cm = round(amp * 100)
    if zh:
        b.set_text(
            f"如图所示，[[entity:block:物块B]]放在[[constraint:smooth:光滑]]水平面上，与劲度系数为"
            f"[[quantity:k:{k} N/m]]的轻弹簧相连。将物块向右拉离平衡位置[[quantity:A:{amp_cm} cm]]后由静止释放，"
            "物块的质量已在图中标出。",
            "求物块B的[[query_target:target:最大速度]]大小。"
            if ask_speed
            else "求物块B振动的[[query_target:target:周期]]。",
        )
    else:
        b.set_text(
            f"[[entity:block:Block B]] rests on a [[constraint:smooth:frictionless]] horizontal floor and is "
            f"attached to a light spring of force constant [[quantity:k:{k} N/m]]. The block is pulled "
            f"[[quantity:A:{amp_cm} cm]] to the right of equilibrium and released from rest. Its mass is marked "
            "in the figure.",
            "Find the [[query_target:target:maximum speed]] of block B."
            if ask_speed
            else "Find the [[query_target:target:period]] of the oscillation of block B.",
        )
    b.refer("block", body_b)
    b.quantity("mass", "m", f"{mass:.2f}", "kg", body_b, glyphs=(m_glyph,))
    b.quantity("spring_constant", "k", str(k), "N/m", body_spring, glyphs=(k_glyph,), mentions=("k",))
    b.quantity("amplitude", "A", str(amp_cm), "cm", body_b, mentions=("A",))
    b.constraint("frictionless", [body_floor], "frictionless horizontal floor", mentions=("smooth",))
    b.relation("attached_to", body_spring, body_wall, visuals=(coil, wall))
    b.relation("attached_to", body_spring, body_b, visuals=(coil, block))
    b.relation("rests_on", body_b, body_floor, visuals=(block, floor))

    omega = math.sqrt(k / mass)
    if ask_speed:
        b.query_target("target", "speed", "v_{max}", [body_b])
        value = omega * amp
        answer = f"{sig3(value)} m/s"
        solution = (
            f"ω = √(k/m) = √({k}/{mass:.2f}) = {sig3(omega)} rad/s; v_max = ωA = {sig3(omega)} × "
            f"{amp:.2f} ≈ {answer}."
        )
    else:
        b.query_target("target", "period", "T", [body_b])
        value = 2 * math.pi / omega
        answer = f"{sig3(value)} s"
        solution = f"T = 2π√(m/k) = 2π√({mass:.2f}/{k}) ≈ {answer}; the amplitude does not affect the period."
    return SceneAnswer("spring", "mechanics", answer, solution)


SceneFn = Callable[[ProblemBuilder, random.Random, bool], SceneAnswer]

FAMILIES: dict[str, tuple[SceneFn, float]] = {
    "incline": (incline, 0.62),
    "atwood": (atwood, 0.68),
    "beam": (beam, 0.7),
    "circuit": (circuit, 0.66),
    "lens": (lens, 0.56),
    "charges": (charges, 0.5),
    "spring": (spring, 0.5),
}
