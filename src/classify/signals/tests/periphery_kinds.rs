//! The gold patch's stale periphery reported by kind (failure-modes.md: call sites, tests, docs,
//! build files), here for a Java method renamed in its core file and left in the others.

use super::{edit, run, step};
use crate::classify::input::Task;
use crate::classify::rules;
use crate::classify::signals::*;
use crate::label::Rule;

fn file(path: &str, hunk: &str) -> String {
    format!("diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n{hunk}")
}

#[test]
fn the_stale_periphery_is_told_by_kind() {
    let core = file(
        "src/main/java/shop/Prices.java",
        "@@ -8,3 +8,3 @@ public final class Prices {\n-    public static String formatPrice(double amount) {\n+    public static String formatAmount(double amount) {\n         return String.format(\"%.2f\", amount);\n",
    );
    let gold = [
        core.clone(),
        file(
            "src/main/java/shop/Invoice.java",
            "@@ -20,1 +20,1 @@ public final class Invoice {\n-        return Prices.formatPrice(total);\n+        return Prices.formatAmount(total);\n",
        ),
        file(
            "src/test/java/shop/PricesTest.java",
            "@@ -12,1 +12,1 @@ class PricesTest {\n-        assertEquals(\"1.50\", Prices.formatPrice(1.5));\n+        assertEquals(\"1.50\", Prices.formatAmount(1.5));\n",
        ),
        file("docs/usage.md", "@@ -3,1 +3,1 @@\n-Call `Prices.formatPrice(amount)` to print a price.\n+Call `Prices.formatAmount(amount)` to print a price.\n"),
        file(
            "pom.xml",
            "@@ -40,1 +40,1 @@\n-            <arguments><argument>shop.Prices#formatPrice</argument></arguments>\n+            <arguments><argument>shop.Prices#formatAmount</argument></arguments>\n",
        ),
    ]
    .join("");
    let steps = vec![
        step(0, "cat src/main/java/shop/Prices.java", "public final class Prices {"),
        step(1, "sed -i 's/formatPrice/formatAmount/' src/main/java/shop/Prices.java", ""),
    ];
    let edits = vec![
        edit(Some(1), "src/main/java/shop/Prices.java", "shell_write", "applied", &[], None),
        edit(None, "src/main/java/shop/Prices.java", "final_patch", "unknown", &[], None),
    ];
    let mut r = run(steps, edits, Some(false), Some(&core));
    r.task = Some(Task { instruction: None, gold_patch: Some(gold) });
    let s = compute(&r);
    let f = rules::evaluate(&s, &[Rule::GoldPeripheryUntouched]);
    let rationale = f.first().map(|f| f.rationale.as_str()).unwrap_or_else(|| panic!("not fired: {:?}", s.periphery));
    assert!(
        rationale.ends_with(
            "4 of 4 periphery files left: call sites src/main/java/shop/Invoice.java; tests src/test/java/shop/PricesTest.java; docs docs/usage.md; build/config files pom.xml"
        ),
        "{rationale}"
    );
}
