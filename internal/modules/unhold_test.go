package modules

import (
	"testing"

	"github.com/kubeedge/beehive/pkg/core/model"
	commonmsg "github.com/kubeedge/kubeedge/edge/pkg/common/message"
	"github.com/kubeedge/kubeedge/edge/pkg/common/modules"
)

// edged reads the release of a held pod as upstream's metaserver sends
// it: its own parser must find the pod's namespace and name, and the
// operation it acts on.
func TestUnholdMessageIsWhatEdgedReads(t *testing.T) {
	m := unholdMessage("shop-floor", "plc-gateway-0")
	ns, typ, name, err := commonmsg.ParseResourceEdge(m.GetResource(), m.GetOperation())
	if err != nil {
		t.Fatal(err)
	}
	if ns != "shop-floor" || typ != model.ResourceTypePod || name != "plc-gateway-0" {
		t.Fatalf("edged parses %q as %s, %s, %s", m.GetResource(), ns, typ, name)
	}
	if m.GetOperation() != model.UnholdUpgradeOperation || m.GetSource() != modules.MetaManagerModuleName {
		t.Fatalf("operation %q from %q, want %q from %q", m.GetOperation(), m.GetSource(), model.UnholdUpgradeOperation, modules.MetaManagerModuleName)
	}
}
