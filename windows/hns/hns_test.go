package hns

import "testing"

func TestIsType(t *testing.T) {
	n := Network{Type: "l2bridge"}
	if !n.IsType(TypeL2Bridge) || n.IsType("NAT") {
		t.Error("HNS network types compare without regard to case")
	}
}
