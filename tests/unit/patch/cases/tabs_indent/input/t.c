int f(void)
{
	if (x) {
		return 1;
	}
}
