package preflight

import (
	"fmt"
	"io"
	"strings"
)

// Render writes the rows as a plain-text table, each FAIL or WARN fix on
// its own line under its row, and a closing count. The table's own text is
// ASCII: the console code pages of Windows Server garble anything else.
func Render(w io.Writer, rows []Row) error {
	nameWidth := len("CHECK")
	for _, r := range rows {
		if len(r.Name) > nameWidth {
			nameWidth = len(r.Name)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-6s  %-*s  %s\n", "STATUS", nameWidth, "CHECK", "DETAIL")
	counts := map[Status]int{}
	for _, r := range rows {
		counts[r.Status]++
		fmt.Fprintf(&b, "%-6s  %-*s  %s\n", r.Status, nameWidth, r.Name, oneLine(r.Detail))
		if r.Fix != "" && r.Status != Pass {
			fmt.Fprintf(&b, "%-6s  %-*s  fix: %s\n", "", nameWidth, "", oneLine(r.Fix))
		}
	}
	fmt.Fprintf(&b, "\npreflight: %d FAIL, %d WARN, %d PASS", counts[Fail], counts[Warn], counts[Pass])
	if counts[Skip] > 0 {
		fmt.Fprintf(&b, ", %d SKIP", counts[Skip])
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}
