"""The verdict engine: claims (`claim`) judged by `verdict`, `prediction`, `share`, `sweep`."""
