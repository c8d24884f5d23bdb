package proxyenv

import (
	"strings"
	"testing"
)

func TestEnvironmentBypassesLoopbackNodeRangesAndCloud(t *testing.T) {
	env := Environment(Inputs{
		Proxy: "http://edge:pr0xy-pass@proxy.example:3128", NoProxy: []string{".corp.example", "10.1.0.0/16", "localhost"},
		PodRanges: []string{"10.244.2.0/24", "10.244.0.0/16"}, ServiceRanges: []string{"10.96.0.0/12"},
		NodeAddresses: []string{"192.0.2.20"}, CloudHosts: []string{"192.0.2.10"},
	})
	want := []string{"HTTP_PROXY=http://edge:pr0xy-pass@proxy.example:3128", "HTTPS_PROXY=http://edge:pr0xy-pass@proxy.example:3128",
		"NO_PROXY=localhost,127.0.0.1,::1,192.0.2.20,10.244.2.0/24,10.244.0.0/16,10.96.0.0/12,192.0.2.10,.corp.example,10.1.0.0/16"}
	if strings.Join(env, "\n") != strings.Join(want, "\n") {
		t.Errorf("environment\n%s\nwant\n%s", strings.Join(env, "\n"), strings.Join(want, "\n"))
	}
	for _, line := range Of(append(env, "PATH=C:\\Windows")) {
		if strings.Contains(line, "pr0xy-pass") || strings.HasPrefix(line, "PATH") {
			t.Errorf("status shows %q", line)
		}
	}
	if Environment(Inputs{}) != nil {
		t.Error("an environment without a proxy")
	}
}

func TestValidateNamesTheFlagNotTheCredentials(t *testing.T) {
	for _, c := range []struct {
		proxy   string
		noProxy []string
		want    string
	}{
		{"proxy.example:3128", nil, FlagProxy},
		{"ftp://u:s3cret@proxy.example", nil, FlagProxy},
		{"http://u:s3cret@proxy.example:3128/path", nil, "path"},
		{"", []string{"x"}, FlagNoProxy},
		{"http://proxy.example:3128", []string{"a b"}, FlagNoProxy},
	} {
		err := Validate(c.proxy, c.noProxy)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("Validate(%q, %v) = %v, want an error naming %s without the password", c.proxy, c.noProxy, err, c.want)
		}
	}
	if err := Validate("https://u:p@proxy.example:3128", []string{"10.0.0.0/8", ".example"}); err != nil {
		t.Error(err)
	}
}

// With a proxy the cluster's ranges must be CIDR ranges; each problem
// names its flag. Without a proxy nothing is asked.
func TestValidateRangesNamesEachMissingOrMalformedRange(t *testing.T) {
	pods := Range{Flag: "--cluster-cidr", What: "the cluster's pod range"}
	svcs := Range{Flag: "--service-cidr", Value: "10.96.0.0", What: "the cluster's service range"}
	errs := ValidateRanges("http://proxy.example:3128", pods, svcs)
	if len(errs) != 2 || !strings.Contains(errs[0].Error(), "--cluster-cidr is not given") || !strings.Contains(errs[0].Error(), "give --cluster-cidr") ||
		!strings.Contains(errs[1].Error(), `--service-cidr "10.96.0.0" is not a CIDR range`) {
		t.Errorf("ValidateRanges = %v", errs)
	}
	if errs := ValidateRanges("", pods, svcs); errs != nil {
		t.Errorf("without a proxy: %v", errs)
	}
	pods.Value, svcs.Value = "10.244.0.0/16", "10.96.0.0/12"
	if errs := ValidateRanges("http://proxy.example:3128", pods, svcs); errs != nil {
		t.Errorf("valid ranges: %v", errs)
	}
}
