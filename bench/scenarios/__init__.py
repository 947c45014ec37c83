"""The bench's scenarios, one file each: its figures' help, its measurement, its report."""
