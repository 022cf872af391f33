package testenv

import (
	"errors"
	"fmt"
	"os"
)

// EnvChromium names the Chromium binary (hack/chromium.sh prints it). The
// route page's browser test drives it headless; it is never downloaded at
// test time.
const EnvChromium = "RAGROUTE_CHROMIUM"

// Chromium returns the path of the browser EnvChromium names.
func Chromium() (string, error) {
	bin := os.Getenv(EnvChromium)
	if bin == "" {
		return "", errors.New(EnvChromium + " is unset: run the tests with `make test`, which installs Chromium (hack/chromium.sh)")
	}
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("%s: %w", EnvChromium, err)
	}
	return bin, nil
}
