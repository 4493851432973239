class PoetTemplate:
    def render(self, messages, add_generation_prompt=True):
        text = "".join(f"<{m['role']}>{m['content']}<end>" for m in messages)
        return text + ("<assistant>" if add_generation_prompt else "")
