#!/usr/bin/env python3
"""tools/check_figures catches what it must (CTest: figure_check_catches).

    /usr/bin/python3 tests/structure/test_check_figures.py [-v]

Each case writes a small tree (results files and a README with markers) to a temporary
folder and runs the checker on it; the last case checks this tree's marked documents
(every *.md the checker lists: README.md and the examples' READMEs) and then a copy of
each with its first figure changed, which must fail with exactly that one figure.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHECKER = os.path.join(ROOT, "tools", "check_figures")
RESULTS = {"val_loss_nats": 1.46783, "exact": 0.999, "parameters": 818496, "curve": {"loss": [2.0, 1.5, 1.25]},
           "sample": {"prompt": "The ", "text": "library\n  is free  "}}


class CheckFigures(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="check_figures_")
        os.makedirs(os.path.join(self.root, "results"))
        for name, scale in (("a", 1.0), ("b", 2.0)):
            data = dict(RESULTS, val_loss_nats=RESULTS["val_loss_nats"] * scale)
            with open(os.path.join(self.root, "results", name + ".json"), "w") as f:
                json.dump(data, f)

    def tearDown(self):
        shutil.rmtree(self.root)

    def run_on(self, readme, root=None, files=()):
        root = root or self.root
        if readme is not None:
            with open(os.path.join(root, "README.md"), "w") as f:
                f.write(readme)
        p = subprocess.run([sys.executable, CHECKER, "--root", root, *files], capture_output=True, text=True)
        return p.returncode, p.stdout + p.stderr

    def assert_passes(self, readme):
        rc, out = self.run_on(readme)
        self.assertEqual(rc, 0, out)
        return out

    def assert_fails(self, readme, message):
        rc, out = self.run_on(readme)
        self.assertEqual(rc, 1, out)
        self.assertIn(message, out)

    def test_agreeing_figures_pass(self):
        out = self.assert_passes(
            "| loss | <!-- fig: results/a.json:val_loss_nats .4f -->**1.4678** nats |\n"
            "exact <!-- fig: results/a.json:exact .1% -->99.9%, "
            "<!-- fig: results/a.json:parameters ,d -->818,496 parameters, "
            "step 2 <!-- fig: results/a.json:curve.loss.-1 .2f -->1.25, "
            "<!-- fig: results/b.json:val_loss_nats - results/a.json:val_loss_nats +.4f -->+1.4678 more, "
            "<!-- fig: min(results/{a,b}.json:val_loss_nats) .3f -->1.468–"
            "<!-- fig: max(results/{a,b}.json:val_loss_nats) .3f -->2.936\n"
            "<!-- fig: results/a.json:sample.prompt + results/a.json:sample.text s -->\n"
            "```\nThe library\n  is free\n```\n"
            "```\n<!-- fig: results/missing.json:x .1f -->not read: inside a code block\n```\n")
        self.assertIn("8 quoted figures in 1 files agree", out)

    def test_tampered_figure_fails(self):
        self.assert_fails("loss <!-- fig: results/a.json:val_loss_nats .4f -->1.4679 nats\n",
                          "README.md:1: quotes '1.4679' where results/a.json:val_loss_nats gives '1.4678'")

    def test_longer_number_fails(self):
        # 1.46783 starts with 1.4678 but is another figure.
        self.assert_fails("<!-- fig: results/a.json:val_loss_nats .4f -->1.46783\n", "quotes '1.46783'")
        self.assert_fails("<!-- fig: results/a.json:parameters d -->8184960\n", "quotes '8184960'")

    def test_missing_file_and_key_fail(self):
        self.assert_fails("<!-- fig: results/c.json:val_loss_nats .4f -->1.4678\n",
                          "results file results/c.json does not exist")
        self.assert_fails("<!-- fig: results/a.json:val_loss .4f -->1.4678\n",
                          "results/a.json has no key val_loss (no 'val_loss')")
        self.assert_fails("<!-- fig: results/a.json:curve.loss.3 .2f -->1.25\n", "index 3 of an array of 3")
        self.assert_fails("<!-- fig: min(results/{a,c}.json:exact) .1% -->99.9%\n",
                          "results file results/c.json does not exist")

    def test_bad_markers_fail(self):
        self.assert_fails("<!-- fig: results/a.json:val_loss_nats -->1.4678\n", "needs an expression and a format")
        self.assert_fails("<!-- fig results/a.json:val_loss_nats .4f -->1.4679\n", "the colon is missing")
        self.assert_fails("<!-- fig: results/{a,b}.json:exact .1% -->99.9%\n", "take min() or max()")
        self.assert_fails("<!-- fig: __import__('os') .1f -->1\n", "only references, numbers")
        self.assert_fails("<!-- fig: results/a.json:sample.text .2f -->1\n", "does not fit the value")

    def test_tampered_code_block_fails(self):
        self.assert_fails("<!-- fig: results/a.json:sample.prompt + results/a.json:sample.text s -->\n"
                          "```\nThe library\n  is not free\n```\n", "the code block after the marker is not")

    def test_update_rewrites_the_figures(self):
        rc, out = self.run_on("loss <!-- fig: results/a.json:val_loss_nats .4f -->**1.5** nats, "
                              "<!-- fig: results/a.json:exact .1% -->X% exact\n"
                              "<!-- fig: results/a.json:sample.prompt s -->\n```\nold\n```\n", files=())
        self.assertEqual(rc, 1, out)
        p = subprocess.run([sys.executable, CHECKER, "--root", self.root, "--update"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with open(os.path.join(self.root, "README.md")) as f:
            self.assertEqual(f.read(), "loss <!-- fig: results/a.json:val_loss_nats .4f -->**1.4678** nats, "
                             "<!-- fig: results/a.json:exact .1% -->99.9% exact\n"
                             "<!-- fig: results/a.json:sample.prompt s -->\n```\nThe\n```\n")
        self.assert_passes(None)

    def test_the_trees_readmes(self):
        """This tree's marked documents pass; each with its first figure tampered fails."""
        # The checker's own list: markers outside code blocks, file:line of each.
        p = subprocess.run([sys.executable, CHECKER, "--root", ROOT, "--list"], capture_output=True, text=True)
        lines = {}
        for m in re.finditer(r"^(\S+?):(\d+): ", p.stdout, re.M):
            lines.setdefault(m.group(1), []).append(int(m.group(2)))
        marked = sorted(lines)
        for rel in ("README.md", "examples/lm/README.md", "examples/copy/README.md"):
            self.assertIn(rel, marked, f"{rel} quotes no marked figure")
        rc, out = self.run_on(None, root=ROOT, files=marked)
        self.assertEqual(rc, 0, out)
        for rel in marked:
            with open(os.path.join(ROOT, rel)) as f:
                text = f.read()
            starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
            number = re.compile(r"<!-- fig:[^>]*-->\**(\d)")
            for n in lines[rel]:  # the first listed marker followed by a digit
                m = number.match(text, text.index("<!-- fig:", starts[n - 1]))
                if m:
                    break
            self.assertIsNotNone(m, f"{rel}: no marked number to tamper with")
            tampered = text[:m.start(1)] + str((int(m.group(1)) + 1) % 10) + text[m.end(1):]
            # The tampered copy sits outside the tree; its markers still read the tree's files.
            copy = os.path.join(self.root, os.path.basename(rel))
            with open(copy, "w") as f:
                f.write(tampered)
            rc, out = self.run_on(None, root=ROOT, files=[copy])
            self.assertEqual(rc, 1, f"{rel}: a tampered figure passed:\n{out}")
            self.assertRegex(out, r"quotes '.*' where .* gives '.*'\ncheck_figures: 1 of \d+ quoted figures disagree")


if __name__ == "__main__":
    unittest.main()
