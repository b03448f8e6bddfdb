int f(void)
{
	if (x) {
		log();
		return 2;
	}
}
