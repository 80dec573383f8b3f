package gate

import (
	"encoding/xml"
	"io"
)

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	ClassName string        `xml:"classname,attr"`
	Name      string        `xml:"name,attr"`
	Failure   *junitMessage `xml:"failure"`
	Error     *junitMessage `xml:"error"`
	Skipped   *junitMessage `xml:"skipped"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
}

// WriteJUnit writes the gate's decision as JUnit XML, one test case per
// check: a regression is a failure, an undecided check an error, a check
// that could not be made a skip.
func WriteJUnit(w io.Writer, verdicts ...*Verdict) error {
	doc := junitSuites{Name: "rprof gate"}
	for _, v := range verdicts {
		s := junitSuite{Name: "rprof gate " + v.Label}
		for _, c := range v.Checks {
			tc := junitCase{ClassName: "rprof.gate." + benchName(v.Label), Name: c.Name, SystemOut: c.Detail}
			msg := &junitMessage{Message: c.Detail, Type: c.Outcome.String()}
			switch c.Outcome {
			case Regression:
				tc.Failure = msg
				s.Failures++
			case Undecided:
				tc.Error = msg
				s.Errors++
			case Skipped:
				tc.Skipped = msg
				s.Skipped++
			}
			s.Cases = append(s.Cases, tc)
			s.Tests++
		}
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Errors += s.Errors
		doc.Skipped += s.Skipped
		doc.Suites = append(doc.Suites, s)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
