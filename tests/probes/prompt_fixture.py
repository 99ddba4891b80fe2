"""Prompt files in the kit's shape (Kit §11) with placeholder wording written for these tests."""

KIT_SHAPED_USER = (
    "<<stem>>\n{stem}\n<<query>>\n{query}\n<<options>>\n{options}\n<<images>>\n{attachment_legend}\n"
    "<<text>>\n{text_locator_views}\n<<evidence>>\n{anchor_block}\n<<references>>\n{reference_block}\n"
    "<<candidates>>\n{candidate_block}\n<<question>>\n{read_instruction}{binding_question}\n"
    "<<rule>>\n{selection_instruction}\n<<reading>>\n{recognition_packet}\n<<output>>\n{output_contract}"
)

KIT_SHAPED_PROMPTS = {
    "template_version": "test_v1",
    "language_policy": "source_matched_v1",
    "en": {
        "system": "SYSTEM-EN",
        "user": KIT_SHAPED_USER,
        "one": "One ID.",
        "set": "All IDs.",
        "read": "Read {read_anchors} verbatim.",
        "packet_empty": "EMPTY",
    },
    "zh": {
        "system": "SYSTEM-ZH",
        "user": KIT_SHAPED_USER,
        "one": "一个。",
        "set": "全部。",
        "read": "读 {read_anchors}。",
        "packet_empty": "空",
    },
}
KIT_SHAPED_TASKS = {
    "T01": {"binding_key": "role", "question": {"en": "Role at {anchor}?", "zh": "{anchor}?"}},
    "T02": {
        "binding_key": "referent",
        "allowed_cardinalities": ["one", "set"],
        "question": {
            "en": {"one": "Pick the referent of {anchor}.", "set": "Pick all referents of {anchor}."},
            "zh": {"one": "{anchor} 指谁？", "set": "{anchor} 指哪些？"},
        },
    },
    "T03": {
        "binding_key": "owner",
        "allowed_cardinalities": ["one"],
        "question": {"en": "Who owns {anchor}?", "zh": "{anchor} 属于谁？"},
    },
}
