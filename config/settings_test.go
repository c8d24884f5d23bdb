package config

import (
	"strings"
	"testing"
)

func windowsHost() Host {
	return Host{GOOS: Windows, Hostname: "LINE3-PC", NodeIP: "10.20.30.40"}
}

func TestSettingsApplyToTheConfiguration(t *testing.T) {
	settings, errs := ParseSettings([]string{
		"modules.edged.tailoredKubeletConfig.maxPods=50",
		"modules.edged.tailoredKubeletConfig.cpuCFSQuotaPeriod=200ms",
		"modules.edged.tailoredKubeletConfig.nodeStatusUpdateFrequency=20s",
		"modules.edged.nodeLabels.rack=7",
		"modules.edgeHub.heartbeat=30",
		"modules.eventBus.enable=true",
		"featureGates.SomeGate=true",
		"modules.edged.tailoredKubeletConfig.clusterDNS=[10.96.0.10, 10.96.0.11]",
		// A string field keeps the text as given, even when it looks
		// like a number.
		"modules.edged.registerNodeNamespace=0123",
		// The last of two settings for one field wins, as in the file.
		"modules.edgeHub.heartbeat=45",
	})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	base, _, err := JoinConfig(JoinOptions{CloudCoreIPPort: "192.168.50.10:10000", Token: testToken}, windowsHost(), nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ApplySettings(base, settings, windowsHost())
	if err != nil {
		t.Fatal(err)
	}
	k := c.Modules.Edged.TailoredKubeletConfig
	switch {
	case k.MaxPods != 50:
		t.Errorf("maxPods %d", k.MaxPods)
	case k.CPUCFSQuotaPeriod == nil || k.CPUCFSQuotaPeriod.Duration.String() != "200ms":
		t.Errorf("cpuCFSQuotaPeriod %v", k.CPUCFSQuotaPeriod)
	case k.NodeStatusUpdateFrequency.Duration.String() != "20s":
		t.Errorf("nodeStatusUpdateFrequency %v", k.NodeStatusUpdateFrequency)
	case c.Modules.Edged.NodeLabels["rack"] != "7":
		t.Errorf("labels %v", c.Modules.Edged.NodeLabels)
	case c.Modules.EdgeHub.Heartbeat != 45:
		t.Errorf("heartbeat %d", c.Modules.EdgeHub.Heartbeat)
	case !c.Modules.EventBus.Enable:
		t.Errorf("eventBus not enabled")
	case !c.FeatureGates["SomeGate"]:
		t.Errorf("feature gates %v", c.FeatureGates)
	case strings.Join(k.ClusterDNS, ",") != "10.96.0.10,10.96.0.11":
		t.Errorf("clusterDNS %v", k.ClusterDNS)
	case c.Modules.Edged.RegisterNodeNamespace != "0123":
		t.Errorf("registerNodeNamespace %q", c.Modules.Edged.RegisterNodeNamespace)
	}
	// What --set does not name keeps the generated value.
	if c.Modules.EdgeHub.Token != testToken || c.Modules.Edged.HostnameOverride != "line3-pc" ||
		c.Modules.EdgeHub.WebSocket.Server != "192.168.50.10:10000" || k.ContainerRuntimeEndpoint != base.Modules.Edged.TailoredKubeletConfig.ContainerRuntimeEndpoint {
		t.Errorf("other fields changed: %+v", c.Modules.EdgeHub)
	}
	if base.Modules.Edged.TailoredKubeletConfig.MaxPods == 50 {
		t.Errorf("the input configuration was changed")
	}
}

func TestSettingsRefusedNamingThePath(t *testing.T) {
	for arg, want := range map[string]string{
		"modules.edged.tailoredKubeletConfig.maxpods=50": `modules.edged.tailoredKubeletConfig has no field "maxpods"; did you mean "maxPods"?`,
		"database.source=x":                                         `database has no field "source"; its fields are aliasName, dataSource, driverName`,
		"modules.edgeHub.heartbeet=30":                              "modules.edgeHub has no field \"heartbeet\"; `edgecore.exe --defaultconfig` lists every field",
		"modules.edged.tailoredKubeletConfig.maxPods=many":          `modules.edged.tailoredKubeletConfig.maxPods: "many" is not a whole number`,
		"modules.edgeHub.heartbeat=":                                "empty value",
		"modules.eventBus.enable=yes":                               `"yes" is not true or false`,
		"modules.edged.tailoredKubeletConfig.syncFrequency=soon":    `"soon" is not a Duration such as 10s: time: invalid duration`,
		"modules.edged=1":                                           "this is a section, not a value: set its fields one by one",
		"modules.edgeHub.heartbeat.x=1":                             `modules.edgeHub.heartbeat is a value, not a section; it has no field "x"`,
		"modules.edged.tailoredKubeletConfig.clusterDNS.0=10.0.0.1": "is a list and is set whole",
		"modules..edged=1":                                          "empty key after modules: remove the doubled or trailing dot",
		"maxPods":                                                   "expected path=value",
		"=5":                                                        "expected path=value",
		"modules.edgeHub.token=abc":                                 "modules.edgeHub.token: give the token with --token",
		"modules.edged.hostnameOverride=x":                          "give the node name with --edgenode-name",
		"modules.edgeHub.enable=false":                              "join needs edgehub to get the node certificates",
		"nothing.here=1":                                            `the configuration has no field "nothing"`,
	} {
		_, errs := ParseSettings([]string{"modules.edgeHub.heartbeat=30", arg})
		if len(errs) != 1 {
			t.Errorf("%s: %d errors %v, want 1", arg, len(errs), errs)
			continue
		}
		msg := errs[0].Error()
		if !strings.HasPrefix(msg, "--set: Invalid value: ") || !strings.Contains(msg, want) {
			t.Errorf("%s:\n got %s\nwant it to name --set and say %q", arg, msg, want)
		}
	}
}

func TestSettingsNeverQuoteTheToken(t *testing.T) {
	const token = "3f6e2b1c9d8a7f6e5d4c.eyJhbGciOiJIUzI1NiJ9.c2lnbmF0dXJl"
	for _, arg := range []string{"modules.edgeHub.token=" + token, " modules.edgeHub.token =" + token, "modules.edgehub.Token=" + token} {
		_, errs := ParseSettings([]string{arg})
		if len(errs) != 1 {
			t.Fatalf("%s: %v, want one refusal", arg, errs)
		}
		msg := errs[0].Error()
		if strings.Contains(msg, token) || strings.Contains(msg, "c2lnbmF0dXJl") {
			t.Errorf("the error quotes the token: %s", msg)
		}
		if !strings.Contains(msg, "=<redacted>") {
			t.Errorf("the error does not name the setting: %s", msg)
		}
	}
}

func TestSettingsReportEveryBadOne(t *testing.T) {
	_, errs := ParseSettings([]string{"a.b=1", "modules.edgeHub.heartbeat=2", "c=3"})
	if len(errs) != 2 {
		t.Fatalf("want both bad settings reported, got %v", errs)
	}
}

func TestSplitSettingsLikeKeadm(t *testing.T) {
	got := SplitSettings([]string{
		"modules.edgeHub.heartbeat=30,modules.edged.tailoredKubeletConfig.maxPods=50",
		"modules.edged.tailoredKubeletConfig.clusterDNS=[10.96.0.10, 10.96.0.11],featureGates.A=true",
		`modules.edged.nodeLabels={a: "x,y"}`,
		"modules.edged.registerNodeNamespace='a,b'",
	})
	want := []string{
		"modules.edgeHub.heartbeat=30",
		"modules.edged.tailoredKubeletConfig.maxPods=50",
		"modules.edged.tailoredKubeletConfig.clusterDNS=[10.96.0.10, 10.96.0.11]",
		"featureGates.A=true",
		`modules.edged.nodeLabels={a: "x,y"}`,
		"modules.edged.registerNodeNamespace='a,b'",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, errs := ParseSettings(got[:4]); len(errs) > 0 {
		t.Errorf("split settings do not parse: %v", errs)
	}
}
